"""``import dupguard.runtime`` stays light: no libcst, no agent framework (DESIGN §7).

Runs in a fresh interpreter because this test process has imported libcst long ago.
"""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ["libcst", "llama_index", "strands", "agents", "autogen_agentchat"]

SCRIPT = r"""
import json, sys
import dupguard.runtime as runtime
after_import = sorted(sys.modules)
missing = []
for name in runtime.__all__:
    try:
        getattr(runtime, name)
    except ImportError as exc:
        # an optional third-party dependency (redis) may be absent; our own modules may not
        if (getattr(exc, "name", None) or "dupguard").startswith("dupguard"):
            missing.append((name, str(exc)))
print(json.dumps({"all": runtime.__all__, "after_import": after_import,
                  "after_touch": sorted(sys.modules), "missing": missing}))
"""


def run_probe():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def forbidden_in(modules):
    return sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)


def test_runtime_import_and_every_export_stay_light():
    probe = run_probe()
    assert forbidden_in(probe["after_import"]) == []
    assert forbidden_in(probe["after_touch"]) == []
    assert probe["missing"] == []
    # the package itself is lazy: importing it loads none of the helper modules
    helpers = [m for m in probe["after_import"] if m.startswith("dupguard.runtime.")]
    assert set(helpers) <= {"dupguard.runtime.errors"}, helpers


def test_probe_would_notice_a_forbidden_import():
    """The check above is not vacuous: a module that imports libcst is seen."""
    assert forbidden_in(["libcst._nodes", "dupguard.runtime"]) == ["libcst._nodes"]
    out = subprocess.run(
        [sys.executable, "-c", "import sys, dupguard.runtime, libcst; print('libcst' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.strip() == "True"
