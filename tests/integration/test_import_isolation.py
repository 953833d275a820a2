"""Importing the runtime or the adapters never imports an agent framework.

Run in fresh interpreters (``sys.modules`` of the test process already holds frameworks),
and with every framework installed, which is when an eager import would show.
"""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ["llama_index", "strands", "agents", "autogen_agentchat", "autogen_core", "autogen_ext"]


def run_python(code: str) -> None:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_acceptance_one_liner():
    run_python(
        "import dupguard.runtime, sys; assert not any(m.split('.')[0] in sys.modules for m in "
        "['llama_index','strands','agents','autogen_agentchat'])"
    )


def test_adapters_import_no_framework():
    """Every adapter module imports, and every guard class instantiates, without a framework."""
    run_python(
        "import sys\n"
        "import dupguard.runtime.adapters\n"
        "import dupguard.runtime.adapters.llamaindex, dupguard.runtime.adapters.strands\n"
        "import dupguard.runtime.adapters.openai_agents, dupguard.runtime.adapters.autogen\n"
        "from dupguard.runtime.adapters import (\n"
        "    AutoGenGuard, LlamaIndexGuard, OpenAIAgentsGuard, StrandsGuard)\n"
        "LlamaIndexGuard(); StrandsGuard(); OpenAIAgentsGuard(); AutoGenGuard()\n"
        f"loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r}))\n"
        "assert not loaded, loaded\n"
    )
