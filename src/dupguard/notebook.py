"""Jupyter notebooks (``.ipynb``): the pipeline's decode step for them, positions, write-back.

A notebook is JSON (nbformat 4). What dupguard lints is the Python its code cells hold,
joined in order into one text, because cells run top to bottom in one namespace: an agent
built in cell 2 and used by a handler in cell 5 is one module's global, as it is for ruff.
:func:`load` turns the bytes into that text (the pipeline's decode step, so that the gate,
the cache, the project index and the rules see a notebook as any other module) and a
:class:`Notebook` that maps its rows back to cells and writes a fixed text back:

* **IPython syntax** that is not Python is blanked, line for line, so every other position
  stays where it was: a line magic (``%matplotlib inline``), a shell escape (``!pip install``,
  ``files = !ls``), a help query (``agent?``) and their ``\\`` continuation lines become
  ``pass`` at the line's indentation (a magic can be a block's only statement) or an empty
  line; a cell magic (``%%bash``) blanks its whole cell, except those whose body is Python
  (``%%time``, ``%%capture``...), where only the first line is blanked;
* **positions** are ruff's: the cell is the cell's 1-based index among all the notebook's
  cells (Markdown ones included, as Jupyter numbers them), the row is 1-based within the
  cell, the column is unchanged (:meth:`Notebook.translate`);
* **write-back** (:meth:`Notebook.apply`, for ``fix`` and ``check --add-noqa``) changes only
  the ``"source"`` values of the code cells whose text changed, spliced into the file's own
  bytes: outputs, metadata, every other cell and the file's formatting (indentation, key
  order, escaping, trailing newline) stay byte for byte as they were. A change that would
  touch a blanked IPython line, or that cannot be told apart between two cells, is refused
  and the notebook is left as it was.

A notebook that is not JSON, not nbformat 4, or whose cells are not shaped as nbformat says
is an :class:`InvalidNotebook`, which the pipeline reports as it reports a file that does not
parse: one line naming the reason, never a traceback.
A notebook whose kernel is not Python (``metadata.language_info.name``) has no code to lint.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .diagnostics import Diagnostic, Fix

# cell magics whose body is Python (the first line is the magic, the rest runs as code)
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy"})

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# a line that IPython rewrites: a magic, a shell escape, an assignment from either, a help query
_IPYTHON = re.compile(r"(?P<indent>[ \t]*)(?:[%!]|[\w.]+\s*=\s*[%!]|[\w.]+\?\??\s*$|\?\??[\w.]+\s*$)")
_WS = re.compile(r"[ \t\n\r]*")
_TRIPLE = re.compile(r"\"\"\"|'''")
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")


class NotebookError(ValueError):
    """A notebook change that cannot be written back; the message says why, for users."""


class InvalidNotebook(ValueError):
    """Bytes that are not an nbformat 4 notebook; the message says why, for users (the
    pipeline's decode step reports it as the file's ``SourceError``)."""


def split_lines(text: str) -> list[str]:
    """Lines with their ends, split where Python's tokenizer and libcst split them (``\\r\\n``,
    ``\\r``, ``\\n``; not ``str.splitlines``'s form feeds and separators)."""
    return _LINE.findall(text)


class _Cell:
    """One code cell: its raw index (1-based, among all cells), where its lines start in the
    joined text, its lines as written and as linted, and how its source was stored."""

    __slots__ = ("added_newline", "blanked", "index", "lines", "listed", "number", "source", "start")

    def __init__(self, number: int, index: int, source: str, listed: bool) -> None:
        self.number = number  # position among the code cells (0-based): which "source" span
        self.index = index
        self.source = source
        self.listed = listed
        self.lines = split_lines(source)
        self.added_newline = bool(self.lines) and not self.lines[-1].endswith(("\n", "\r"))
        if self.added_newline:
            self.lines[-1] += "\n"
        self.blanked = _blank(self.lines)
        self.start = 0  # set by the notebook: its first row in the joined text (1-based)

    def linted(self) -> list[str]:
        return [blank if blank is not None else line for line, blank in zip(self.lines, self.blanked)]


def _blank(lines: list[str]) -> list[str | None]:
    """For each line, the text that replaces it when it is IPython rather than Python (None: kept)."""
    out: list[str | None] = [None] * len(lines)
    if not lines:
        return out
    first = lines[0].strip()
    if first.startswith("%%"):
        name = first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return [_ending(line) for line in lines]
        out[0] = _ending(lines[0])
        start = 1
    else:
        start = 0
    continued = False
    quote: str | None = None  # the triple quote of a string that goes on past this line
    for i in range(start, len(lines)):
        line = lines[i]
        if continued:
            out[i] = _ending(line)
        elif quote is None and (match := _IPYTHON.match(line)) is not None:
            out[i] = match.group("indent") + "pass" + _ending(line)
        else:  # Python: a line of a triple-quoted string may start with "%" or "!" and is kept
            for found in _TRIPLE.finditer(line):
                if quote is None:
                    quote = found.group()
                elif found.group() == quote:
                    quote = None
            continue
        continued = line.rstrip("\r\n").endswith("\\")
    return out


def _ending(line: str) -> str:
    """The line's end (an empty line in its place)."""
    return line[len(line.rstrip("\r\n")) :]


class Notebook:
    """A decoded notebook: the joined text of its code cells (:attr:`text`), the map from its
    rows to cells, and the file's own text for :meth:`apply`."""

    def __init__(self, raw: str, encoding: str, cells: list[_Cell]) -> None:
        self.raw = raw
        self.encoding = encoding
        self.cells = cells
        row = 1
        for cell in cells:
            cell.start = row
            row += len(cell.lines)
        self.rows = row - 1
        self.text = "".join(line for cell in cells for line in cell.linted())
        # the cells that hold rows, by their first row (an empty cell holds none)
        self._holding = [cell for cell in cells if cell.lines]
        self._starts = [cell.start for cell in self._holding]

    # ------------------------------------------------------------------ positions

    def locate(self, row: int) -> tuple[int, int]:
        """A row of the joined text → (cell index, row in that cell), both 1-based."""
        if not self._holding:
            return 1, row
        at = max(0, bisect.bisect_right(self._starts, row) - 1)
        cell = self._holding[at]
        return cell.index, row - cell.start + 1

    def cell_lines(self, index: int) -> list[str]:
        """The lines of the cell with this index, as written (magics included), without their ends."""
        for cell in self.cells:
            if cell.index == index:
                return [line.rstrip("\r\n") for line in cell.lines]
        return []

    def translate(self, diagnostic: Diagnostic) -> Diagnostic:
        """A finding on the joined text → the same finding at its cell and the row in that cell
        (the end, and a fix's edits, each in the cell they fall in, as ruff reports them)."""
        cell, row = self.locate(diagnostic.row)
        end_row = self.locate(diagnostic.end_row)[1] if diagnostic.end_row else 0
        fix = self._translate_fix(diagnostic.fix) if diagnostic.fix is not None else None
        message = _LINE_REFERENCE.sub(self._cell_line, diagnostic.message)
        return diagnostic._replace(row=row, end_row=end_row, fix=fix, cell=cell, message=message)

    def _cell_line(self, match: re.Match[str]) -> str:
        """A message's "line N" (rules name the lines of the same module that way) as "cell C, line R"."""
        cell, row = self.locate(int(match.group(1)))
        return f"cell {cell}, line {row}"

    def _translate_fix(self, fix: Fix) -> Fix:
        edits = tuple(
            edit._replace(row=self.locate(edit.row)[1], end_row=self.locate(edit.end_row)[1]) for edit in fix.edits
        )
        return fix._replace(edits=edits)

    # ------------------------------------------------------------------ write-back

    def apply(self, new_text: str) -> bytes:
        """The notebook's bytes with its code cells holding ``new_text`` (a fixed version of
        :attr:`text`): each changed line is given to the cell it replaces, inserted lines to
        the cell around them (between two cells: :meth:`_insertion`). Raises :class:`NotebookError` when a change
        touches a blanked IPython line or replaces lines of two cells by a different number
        of lines (where they belong cannot be told)."""
        import difflib

        old = [(cell, i) for cell in self._holding for i in range(len(cell.lines))]
        linted = {id(cell): cell.linted() for cell in self._holding}
        old_lines = [linted[id(cell)][i] for cell, i in old]
        new_lines = split_lines(new_text)
        out: dict[int, list[str]] = {id(cell): [] for cell in self._holding}
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for t in range(i2 - i1):
                    cell, i = old[i1 + t]
                    out[id(cell)].append(cell.lines[i])  # as written: magics come back
                continue
            for cell, i in old[i1:i2]:
                if cell.blanked[i] is not None:
                    raise NotebookError(
                        f"the change touches an IPython line (cell {cell.index}, line {i + 1}); notebook left unchanged"
                    )
            owners = {id(cell) for cell, _ in old[i1:i2]}
            if len(owners) > 1:
                if i2 - i1 != j2 - j1:
                    raise NotebookError(
                        "a change spans two cells and cannot be divided between them; notebook left unchanged"
                    )
                for t in range(i2 - i1):
                    out[id(old[i1 + t][0])].append(new_lines[j1 + t])
                continue
            if owners:
                out[id(old[i1][0])].extend(new_lines[j1:j2])
                continue
            for target, lines in self._insertion(old, i1, new_lines[j1:j2]):
                out[id(target)].extend(lines)
        changed: dict[int, str] = {}
        for cell in self._holding:
            source = "".join(out[id(cell)])
            if cell.added_newline:  # it ended without a newline (Jupyter's way): so it does again
                source = source.rstrip("\r\n")
            if source != cell.source:
                changed[cell.number] = source
        if not changed:
            return self.raw.encode(self.encoding)
        return _splice(self.raw, changed, {cell.number: cell.listed for cell in self.cells}).encode(self.encoding)

    @staticmethod
    def _insertion(old: list[tuple[_Cell, int]], at: int, lines: list[str]) -> list[tuple[_Cell, list[str]]]:
        """Where lines inserted before old line ``at`` go: into the cell around them; between two
        cells, the indented lines they start with (and blank lines among them) continue the
        block the previous cell ends with, and the rest starts the next cell (a cell cannot
        start indented)."""
        before = old[at - 1][0] if at > 0 else None
        after = old[at][0] if at < len(old) else None
        if before is None and after is None:
            raise NotebookError("the notebook has no code cell to hold the change; notebook left unchanged")
        if before is None or after is None or before is after:
            return [(after or before, lines)]  # type: ignore[list-item]
        split = 0
        for k, line in enumerate(lines):
            if not line.strip():
                continue
            if line[:1] not in (" ", "\t"):
                break
            split = k + 1
        return [(before, lines[:split]), (after, lines[split:])]


# ----------------------------------------------------------------------------- decoding


def load(data: bytes) -> Notebook:
    """A notebook's bytes → :class:`Notebook`; :class:`InvalidNotebook` with the reason when
    they are not an nbformat 4 notebook."""
    import json

    encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    try:
        raw = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InvalidNotebook(f"invalid notebook: cannot decode as utf-8: {exc.reason}") from None
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidNotebook(
            f"invalid notebook: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise InvalidNotebook("invalid notebook: JSON nested too deeply") from None
    if not isinstance(document, dict):
        raise InvalidNotebook("invalid notebook: the top level is not a JSON object")
    if "cells" not in document:
        if "worksheets" in document:
            raise InvalidNotebook("unsupported notebook format (nbformat 3); dupguard reads nbformat 4")
        raise InvalidNotebook('invalid notebook: no "cells" list')
    cells = document["cells"]
    if not isinstance(cells, list):
        raise InvalidNotebook('invalid notebook: "cells" is not a list')
    python = _is_python(document.get("metadata"))
    code: list[_Cell] = []
    for index, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise InvalidNotebook(f'invalid notebook: cell {index} is not an object with a "cell_type"')
        if cell["cell_type"] != "code":
            continue
        source = cell.get("source")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            text, listed = "".join(source), True
        elif isinstance(source, str):
            text, listed = source, False
        else:
            raise InvalidNotebook(f'invalid notebook: cell {index}: "source" is not a string or a list of strings')
        code.append(_Cell(len(code), index, text, listed))
    return Notebook(raw, encoding, code if python else [])


def _is_python(metadata: Any) -> bool:
    """Is the kernel Python? (unknown: yes). ``language_info.name``, else ``kernelspec.language``."""
    if not isinstance(metadata, dict):
        return True
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(field), str):
            return info[field].lower() == "python"
    return True


# ----------------------------------------------------------------------------- splicing


def _splice(raw: str, changed: dict[int, str], listed: dict[int, bool]) -> str:
    """``raw`` with the ``"source"`` value of the code cells numbered in ``changed`` replaced,
    each written the way the file writes it (a list of lines or one string; its indentation
    and escaping); every other byte as it was."""
    spans = _source_spans(raw)
    ensure_ascii = raw.isascii() and "\\u" in raw
    parts = []
    at = 0
    for number in sorted(changed):
        if number >= len(spans):
            raise NotebookError("the cell's source cannot be found in the file; notebook left unchanged")
        start, end = spans[number]
        parts.append(raw[at:start])
        parts.append(_format_source(raw, start, end, changed[number], listed[number], ensure_ascii))
        at = end
    parts.append(raw[at:])
    return "".join(parts)


def _format_source(raw: str, start: int, end: int, source: str, listed: bool, ensure_ascii: bool) -> str:
    import json

    if not listed:
        return json.dumps(source, ensure_ascii=ensure_ascii)
    lines = source.splitlines(keepends=True)  # nbformat's own split
    if not lines:
        return "[]"
    old = raw[start:end]
    inner = old[1:-1]
    if inner.strip():
        opening = _WS.match(inner).group()  # type: ignore[union-attr]
        closing = inner[len(inner.rstrip(" \t\r\n")) :]
        after_comma = re.search(r",([ \t\r\n]*)", inner)
        separator = "," + (after_comma.group(1) if after_comma else opening)
    else:  # an empty list: indent one level deeper than the "source" key's line
        line_start = raw.rfind("\n", 0, start) + 1
        key_indent = raw[line_start : line_start + len(raw[line_start:]) - len(raw[line_start:].lstrip(" \t"))]
        if "\n" not in raw:
            opening, closing = "", ""
        else:
            unit = _indent_unit(raw)
            opening, closing = "\n" + key_indent + unit, "\n" + key_indent
        separator = "," + opening
    return "[" + opening + separator.join(json.dumps(line, ensure_ascii=ensure_ascii) for line in lines) + closing + "]"


def _indent_unit(raw: str) -> str:
    match = re.match(r"\s*\{\r?\n([ \t]+)", raw)
    return match.group(1) if match else " "


def _source_spans(raw: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of each code cell's ``"source"`` value in ``raw``, in order.

    The standard library's JSON decoder gives values, not where they are; this follows the
    document's structure (top-level object → ``cells`` array → each cell object) with the
    decoder's own scanners, which tell where each key and value ends. ``raw`` has been
    parsed once already, so only its shape is checked here."""
    try:
        members, _ = _members(raw, 0)
        cells = [(start, end) for key, start, end in members if key == "cells"]
        if not cells:
            raise NotebookError('no "cells"')
        start, _ = cells[-1]  # a repeated key: JSON keeps the last
        spans: list[tuple[int, int]] = []
        pos = _skip_ws(raw, start)
        _expect(raw, pos, "[")
        pos = _skip_ws(raw, pos + 1)
        if raw[pos] == "]":
            return spans
        while True:
            cell, pos = _members(raw, pos)
            kinds = [raw[s:e] for key, s, e in cell if key == "cell_type"]
            if kinds and kinds[-1] == '"code"':
                sources = [(s, e) for key, s, e in cell if key == "source"]
                if not sources:
                    raise NotebookError('a code cell without "source"')
                spans.append(sources[-1])
            pos = _skip_ws(raw, pos)
            if raw[pos] == "]":
                return spans
            _expect(raw, pos, ",")
            pos = _skip_ws(raw, pos + 1)
    except (ValueError, IndexError) as exc:  # NotebookError and the decoder's errors are ValueErrors
        raise NotebookError(f"the notebook's cells could not be located ({exc}); notebook left unchanged") from None


def _skip_ws(raw: str, pos: int) -> int:
    return _WS.match(raw, pos).end()  # type: ignore[union-attr]


def _expect(raw: str, pos: int, char: str) -> None:
    if raw[pos : pos + 1] != char:
        raise NotebookError(f"expected {char!r} at offset {pos}")


def _members(raw: str, pos: int) -> tuple[list[tuple[str, int, int]], int]:
    """The members of the JSON object at ``pos``: (key, value start, value end) each, and the
    offset just past the object."""
    import json
    from json.decoder import scanstring  # type: ignore[attr-defined]  # the decoder's own string scanner

    decoder = json.JSONDecoder()
    pos = _skip_ws(raw, pos)
    _expect(raw, pos, "{")
    pos = _skip_ws(raw, pos + 1)
    out: list[tuple[str, int, int]] = []
    if raw[pos] == "}":
        return out, pos + 1
    while True:
        _expect(raw, pos, '"')
        key, pos = scanstring(raw, pos + 1)
        pos = _skip_ws(raw, pos)
        _expect(raw, pos, ":")
        start = _skip_ws(raw, pos + 1)
        end = decoder.raw_decode(raw, start)[1]
        out.append((key, start, end))
        pos = _skip_ws(raw, end)
        if raw[pos] == "}":
            return out, pos + 1
        _expect(raw, pos, ",")
        pos = _skip_ws(raw, pos + 1)
