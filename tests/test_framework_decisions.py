"""The framework decisions recorded in docs/catalog.md ("Decisions where the reports and the
docs disagree"), pinned on the code shapes the reports describe."""

from __future__ import annotations

import textwrap

from dupguard.config import Settings
from dupguard.pipeline import lint_text


def _codes(source: str, codes: set[str]) -> list[tuple[int, str]]:
    found = lint_text("app.py", textwrap.dedent(source), Settings(), frozenset(codes))
    return [(d.row, d.code) for d in found]


def test_agno_gather_over_one_agent_with_a_session_per_run_is_clean() -> None:
    # agno 3.1.10 keeps the run's session id and context per call (agno-agi/agno#3937 is 1.x)
    assert (
        _codes(
            """
            import asyncio
            from agno.agent import Agent
            from fastapi import FastAPI

            app = FastAPI()
            helper = Agent(name="helper")

            @app.post("/batch")
            async def batch(payload: dict):
                runs = (helper.arun(q, session_id=f"{payload['user']}-{i}") for i, q in enumerate(payload["qs"]))
                return await asyncio.gather(*runs)
            """,
            {"DUP101", "DUP201"},
        )
        == []
    )


def test_agno_1x_projects_can_declare_the_agent_stateful() -> None:
    from dupguard.config import Settings as S

    settings = S(extend_stateful_agents=("agno.agent.Agent",))
    source = textwrap.dedent(
        """
        import asyncio
        from agno.agent import Agent
        from fastapi import FastAPI

        app = FastAPI()
        helper = Agent(name="helper")

        @app.post("/batch")
        async def batch(payload: dict):
            return await asyncio.gather(*(helper.arun(q) for q in payload["qs"]))
        """
    )
    found = lint_text("app.py", source, settings, frozenset({"DUP201"}))
    assert [(d.row, d.code) for d in found] == [(11, "DUP201")]


def test_pydantic_ai_module_level_agent_is_clean_but_per_request_prompts_are_registrations() -> None:
    source = """
        from fastapi import FastAPI
        from pydantic_ai import Agent

        app = FastAPI()
        writer = Agent("openai:gpt-4o-mini")

        @app.post("/plain")
        async def plain(payload: dict):
            return (await writer.run(payload["text"], instructions=f"Write for {payload['name']}.")).output

        @app.post("/per-request-prompt")
        async def per_request_prompt(payload: dict):
            @writer.system_prompt
            def persona() -> str:
                return f"Write for {payload['name']}."

            return (await writer.run(payload["text"])).output
        """
    assert _codes(source, {"DUP101", "DUP401"}) == [(14, "DUP401")]
