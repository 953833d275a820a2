"""The ``libcst_mode`` fixture: run a test with dupguard's libcst shortcuts on ("fast") and off
("plain", what ``DUPGUARD_PLAIN_LIBCST=1`` gives), so that each equivalence test checks both
the shortcut and the plain-libcst path it falls back to (``dupguard.cstfast``).

Test modules use it with ``from cstmodes import libcst_mode  # noqa: F401`` and either
``pytestmark = pytest.mark.usefixtures("libcst_mode")`` or a ``libcst_mode`` argument.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dupguard import cstfast

MODES = ("fast", "plain")


@pytest.fixture(params=MODES)
def libcst_mode(request: pytest.FixtureRequest) -> Iterator[str]:
    before = cstfast.enabled()
    cstfast.set_enabled(request.param == "fast")
    try:
        yield request.param
    finally:
        cstfast.set_enabled(before)
