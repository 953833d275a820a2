"""Lexical query similarity for deduplicating read-only tool calls (done carefully).

This is *lexical*, not semantic: two queries count as "similar" when their word sets nearly
coincide (``token_set_ratio`` ≥ ``threshold``). It knows nothing about meaning, so it refuses
to call two queries similar whenever a difference could change what the call does:

* the numbers or identifiers differ ("refund order 50" vs "refund order 500",
  "user u_81f3" vs "user u_81f4") — a token with a digit or an id-like shape must match exactly;
* the destructive or state-changing verbs differ ("delete user" vs "deactivate user");
* a negation differs ("users with 2fa" vs "users without 2fa");
* one query adds content words to the other ("orders" vs "orders cancelled last week"):
  ``token_set_ratio`` scores a subset as 100, but a narrower query asks for something else.

Stop words ("the", "a", "please", ...) are dropped by :func:`normalize_query`, so
"fix bug" and "fix the bug" normalise to the same text.

The score comes from rapidfuzz's ``fuzz.token_set_ratio`` when rapidfuzz is installed (the
``fuzzy`` extra) and from a difflib-based re-implementation of the same formula otherwise. The
two agree exactly on the subset case and within a few points elsewhere: difflib's matcher finds
at most the longest common subsequence rapidfuzz counts exactly, so the fallback can only score
lower — it never dedupes a pair that rapidfuzz would keep apart. Both paths are tested.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable
from typing import Any

__all__ = ["guard_reason", "normalize_query", "score", "similar"]

#: Words that carry no meaning for a search query; removed by :func:`normalize_query`.
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "to",
        "in",
        "on",
        "at",
        "by",
        "from",
        "with",
        "about",
        "into",
        "onto",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "me",
        "my",
        "i",
        "we",
        "our",
        "you",
        "your",
        "please",
        "pls",
        "kindly",
        "can",
        "could",
        "would",
        "should",
        "will",
        "just",
        "some",
        "any",
        "and",
        "or",
        "find",
        "search",
        "look",
        "lookup",
        "show",
        "get",
        "give",
        "tell",
        "what",
        "which",
        "who",
        "whose",
        "how",
        "where",
        "when",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "there",
        "also",
        "than",
        "then",
    ]
)

#: Words that flip or restrict meaning; two queries whose sets of these differ are never similar.
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "without",
        "except",
        "excluding",
        "exclude",
        "never",
        "none",
        "nor",
        "non",
        "cannot",
        "dont",
        "doesnt",
        "isnt",
        "arent",
        "wasnt",
        "werent",
        "unless",
    ]
)

#: Verbs (and their stems) that change state or destroy data. The usual advice strips
#: "dangerous tokens"; here a difference in them blocks similarity instead, so "delete user" and
#: "deactivate user" stay two different requests.
DANGEROUS_STEMS = frozenset(
    [
        "delet",
        "remov",
        "drop",
        "destroy",
        "purg",
        "wip",
        "eras",
        "truncat",
        "deactivat",
        "disabl",
        "suspend",
        "ban",
        "block",
        "kill",
        "terminat",
        "cancel",
        "revok",
        "refund",
        "charg",
        "pay",
        "transfer",
        "send",
        "email",
        "emailing",
        "notify",
        "approv",
        "reject",
        "deny",
        "overwrit",
        "replac",
        "reset",
        "updat",
        "modif",
        "edit",
        "chang",
        "writ",
        "creat",
        "insert",
        "add",
        "archiv",
        "unarchiv",
        "restor",
        "migrat",
        "deploy",
        "rollback",
        "revert",
        "merg",
        "publish",
        "unpublish",
        "shutdown",
        "restart",
        "reboot",
        "grant",
        "lock",
        "unlock",
        "sell",
        "buy",
        "order",
        "book",
        "execut",
        "run",
    ]
)

_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s", "e")
_EDGE_PUNCT = re.compile(r"^[^\w]+|[^\w]+$", re.UNICODE)
_SPLIT = re.compile(r"[\s,;!?()\[\]{}\"'`<>|]+")
_HEX_ID = re.compile(r"^[0-9a-f]{8,}$")


def _stem(token: str) -> str:
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)]
    return token


def _tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", str(text)).casefold()
    out = []
    for raw in _SPLIT.split(text):
        token = _EDGE_PUNCT.sub("", raw)
        if token:
            out.append(token.replace("'", ""))
    return out


def normalize_query(text: str) -> str:
    """Return the comparable form of a query: NFKC, casefolded, punctuation at word edges
    removed, stop words dropped, whitespace collapsed.

    Punctuation *inside* a word is kept ("order-50", "v1.2", "a@b.com") because it is often
    part of an identifier. Negations are kept (they are not stop words).

    >>> normalize_query("  Fix the BUG, please! ")
    'fix bug'
    """
    return " ".join(t for t in _tokens(text) if t not in STOP_WORDS)


def _is_identifier(token: str) -> bool:
    """A token that names one specific thing: anything with a digit, id punctuation or a
    hex run. Such tokens must match exactly for two queries to be similar."""
    return any(ch.isdigit() for ch in token) or any(ch in token for ch in "_@#/:=") or bool(_HEX_ID.match(token))


def _dangerous(tokens: set[str]) -> set[str]:
    """The destructive stems present, so that "delete", "deleted" and "deleting" agree."""
    found = set()
    for token in tokens:
        stem = _stem(token)
        if stem in DANGEROUS_STEMS or token in DANGEROUS_STEMS:
            found.add(stem if stem in DANGEROUS_STEMS else token)
            continue
        prefixes = [s for s in DANGEROUS_STEMS if len(s) >= 5 and token.startswith(s)]
        if prefixes:
            found.add(max(prefixes, key=len))
    return found


def guard_reason(a: str, b: str) -> str | None:
    """Why ``a`` and ``b`` must never be treated as the same query, or ``None`` when only the
    similarity score decides. Works on the raw texts (it normalises them itself)."""
    ta, tb = set(normalize_query(a).split()), set(normalize_query(b).split())
    if not ta or not tb:
        return "empty query"
    ids_a = {t for t in ta if _is_identifier(t)}
    ids_b = {t for t in tb if _is_identifier(t)}
    if ids_a != ids_b:
        return "numbers or identifiers differ"
    if _dangerous(ta) != _dangerous(tb):
        return "destructive or state-changing verbs differ"
    if (ta & NEGATIONS) != (tb & NEGATIONS):
        return "negations differ"
    if ta != tb and (ta < tb or tb < ta):
        return "one query adds words to the other"
    return None


# --- scoring -------------------------------------------------------------------------------

_FUZZ: Any = None  # rapidfuzz.fuzz once loaded, False when unavailable; tests may set False
_UNSET = object()


def _load_fuzz() -> Any:
    global _FUZZ
    if _FUZZ is None:
        try:
            from rapidfuzz import fuzz
        except ImportError:
            _FUZZ = False
        else:
            _FUZZ = fuzz
    return _FUZZ


def _difflib_token_set_ratio(s1: str, s2: str) -> float:
    """``rapidfuzz.fuzz.token_set_ratio`` re-implemented with difflib (0..100).

    Same structure as rapidfuzz's reference implementation: the shared words, then each
    side's extra words; 100 when one word set contains the other; otherwise the best of three
    normalised indel similarities. difflib's ``SequenceMatcher`` (``autojunk=False``) stands
    in for the exact longest-common-subsequence count.
    """
    tokens_a, tokens_b = set(s1.split()), set(s2.split())
    if not tokens_a or not tokens_b:
        return 0.0
    intersect = tokens_a & tokens_b
    diff_ab, diff_ba = tokens_a - tokens_b, tokens_b - tokens_a
    if intersect and (not diff_ab or not diff_ba):
        return 100.0
    ab = " ".join(sorted(diff_ab))
    ba = " ".join(sorted(diff_ba))
    sect_len = len(" ".join(intersect))
    sect_ab_len = sect_len + (sect_len != 0) + len(ab)
    sect_ba_len = sect_len + (sect_len != 0) + len(ba)
    matcher = difflib.SequenceMatcher(None, ab, ba, autojunk=False)
    matches = sum(block.size for block in matcher.get_matching_blocks())
    dist = len(ab) + len(ba) - 2 * matches
    total = sect_ab_len + sect_ba_len
    result = 100.0 - 100.0 * dist / total if total else 100.0
    if not sect_len:
        return result
    sect_ab = 100.0 - 100.0 * ((sect_len != 0) + len(ab)) / (sect_len + sect_ab_len)
    sect_ba = 100.0 - 100.0 * ((sect_len != 0) + len(ba)) / (sect_len + sect_ba_len)
    return max(result, sect_ab, sect_ba)


def _scorer() -> Callable[[str, str], float]:
    fuzz = _load_fuzz()
    if fuzz:
        return lambda a, b: float(fuzz.token_set_ratio(a, b, processor=None))
    return _difflib_token_set_ratio


def score(a: str, b: str) -> float:
    """Token-set similarity of the *normalised* queries, 0.0–1.0 (no guards applied)."""
    return _scorer()(normalize_query(a), normalize_query(b)) / 100.0


def backend() -> str:
    """``"rapidfuzz"`` or ``"difflib"``: which scorer :func:`similar` uses right now."""
    return "rapidfuzz" if _load_fuzz() else "difflib"


def similar(a: str, b: str, *, threshold: float = 0.90) -> bool:
    """True when ``a`` and ``b`` are the same query up to wording: no guard in
    :func:`guard_reason` applies and the token-set similarity is at least ``threshold``.

    >>> similar("fix the bug", "Fix bug!")
    True
    >>> similar("refund order 50", "refund order 500")
    False
    >>> similar("delete user bob", "deactivate user bob")
    False
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError("threshold must be in (0, 1]")
    if guard_reason(a, b) is not None:
        return False
    return score(a, b) >= threshold
