"""``dupguard.semantic.effects`` and the edges of the rules that read it (DUP204, DUP506,
DUP507, DUP508): what a tool's name and body say it does, which tools an agent gets, and the
near-misses each rule must stay quiet on."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dupguard.config import Settings
from dupguard.pipeline import lint_text
from dupguard.semantic.builder import build_model
from dupguard.semantic.catalog_loader import catalog_for
from dupguard.semantic.effects import is_test_module, name_effect, tools_of


def _model(source: str):
    settings = Settings()
    return build_model(cst.parse_module(textwrap.dedent(source)), catalog_for(settings), settings)


def _codes(source: str, code: str) -> list[int]:
    return [d.row for d in lint_text("app.py", textwrap.dedent(source), Settings(), frozenset({code}))]


@pytest.mark.parametrize(
    ("name", "effect"),
    [
        ("refund_order", "write"),
        ("send_email", "write"),
        ("GmailCreateDraft", "write"),
        ("EmailSender", "write"),
        ("post_to_slack", "write"),
        ("execute_trade", "write"),  # "execute" says nothing; "trade" does
        ("update_address", "overwrite"),
        ("delete_user", "overwrite"),
        ("FileWriterTool", "overwrite"),
        ("cancel_booking", "overwrite"),
        ("get_order_status", "read"),  # the first verb decides: "order" is not read as one
        ("web_search", "read"),
        ("WebsiteSearchTool", "read"),
        ("add", None),  # the calculator's add
        ("run_sql", None),
        ("weather", None),
    ],
)
def test_the_first_known_verb_of_a_name_decides(name: str, effect: str | None) -> None:
    assert name_effect(name) == effect


def test_tools_are_followed_through_names_lists_members_and_wrapped_methods() -> None:
    model = _model(
        """
        from agents import Agent, function_tool
        from agno.agent import Agent as AgnoAgent
        from agno.team import Team

        def search_kb(q): ...
        def refund_payment(order_id): ...
        BASE = [search_kb]
        TOOLS = BASE + [refund_payment]
        billing = AgnoAgent(tools=TOOLS)
        team = Team(members=[billing])

        class Chat:
            def __init__(self):
                self.agent = Agent(name="a", tools=[function_tool(self.save_order)])

            def save_order(self, order): ...
        """
    )
    by_func = {c.func: c for c in model.calls}
    assert [t.name for t in tools_of(model, by_func["AgnoAgent"])] == ["search_kb", "refund_payment"]
    assert [t.name for t in tools_of(model, by_func["Team"], ("tools", "members"))] == ["search_kb", "refund_payment"]
    (wrapped,) = tools_of(model, by_func["Agent"])
    assert wrapped.name == "save_order" and wrapped.function is not None and wrapped.effect(model) == "overwrite"


def test_an_unfollowable_tool_list_is_unknown_not_empty() -> None:
    model = _model(
        """
        from crewai import Agent
        from .tools import build_tools

        a = Agent(role="r", goal="g", backstory="b", tools=build_tools())
        b = Agent(role="r", goal="g", backstory="b")
        """
    )
    first, second = (c for c in model.calls if c.func == "Agent")
    assert tools_of(model, first) is None and tools_of(model, second) == []


def test_a_tool_class_is_named_by_its_name_attribute_and_judged_by_its_body() -> None:
    model = _model(
        """
        from crewai import Agent
        from crewai.tools import BaseTool

        class MailTool(BaseTool):
            name: str = "MailTool"

            def _run(self, body: str) -> str:
                return create_draft(service, "me", body)

        a = Agent(role="r", goal="g", backstory="b", tools=[MailTool()])
        """
    )
    (tool,) = tools_of(model, next(c for c in model.calls if c.func == "Agent"))
    assert (tool.name, tool.effect(model)) == ("MailTool", "write")


def test_idempotent_write_tools_are_not_counted() -> None:
    source = """
        import httpx
        from crewai import Agent
        from dupguard.runtime import idempotent

        @idempotent(key=lambda order_id: f"refund:{order_id}")
        def refund_order(order_id): ...

        def charge_card(order_id, key):
            return httpx.post("/charges", json={"order": order_id}, headers={"Idempotency-Key": key})

        a = Agent(role="r", goal="g", backstory="b", tools=[refund_order, charge_card], max_retry_limit=3)
        """
    assert _codes(source, "DUP507") == []
    unguarded = textwrap.dedent(source).replace('@idempotent(key=lambda order_id: f"refund:{order_id}")\n', "")
    assert _codes(unguarded, "DUP507") == [11]


def test_a_test_module_is_recognised() -> None:
    assert is_test_module(_model("import pytest\n"))
    assert is_test_module(_model("def test_refund():\n    pass\n"))
    assert not is_test_module(_model("import httpx\n\ndef tester():\n    pass\n"))


DUP506_NEAR_MISSES = """
    import asyncio
    from dupguard.runtime import ToolCallLedger
    from openai import OpenAI

    client = OpenAI()
    PENDING: dict[str, dict] = {}
    LOCKS: dict[str, asyncio.Lock] = {}

    def run(message, ledger: ToolCallLedger, session_id: str):
        done = set()
        for call in message.tool_calls:
            if call.id in done:  # one turn's seen-set
                continue
            done.add(call.id)
            ledger.begin(call.id, call.function.name, call.function.arguments)  # the ledger's own key
            LOCKS.setdefault(session_id, asyncio.Lock())

    def approve(call_id: str):
        if call_id not in PENDING:  # looking a call up is correlation
            raise KeyError(call_id)
        return PENDING.pop(call_id)
"""


def test_per_turn_ids_that_correlate_are_not_keys() -> None:
    assert _codes(DUP506_NEAR_MISSES, "DUP506") == []


def test_a_per_turn_id_reaching_a_key_through_a_local_name_is_reported() -> None:
    source = """
        from openai import OpenAI
        from redis import Redis

        r = Redis()
        SEEN: set[str] = set()

        def run(message, conversation_id):
            for tool_call in message.tool_calls:
                claim = f"{conversation_id}:{tool_call.id}"
                if not r.set(claim, 1, nx=True):
                    continue
                if tool_call.id in SEEN:
                    continue
        """
    assert _codes(source, "DUP506") == [11, 13]
    # the same code in a test module is where such keys are exercised on purpose
    assert _codes("import pytest\n" + textwrap.dedent(source), "DUP506") == []


def test_a_replayed_tool_calls_payload_is_dup502s_not_dup508s() -> None:
    source = """
        from openai import OpenAI
        from .tools import execute_tool_calls

        client = OpenAI()

        def handle(msg):
            try:
                return execute_tool_calls(msg.tool_calls)
            except TimeoutError:
                return execute_tool_calls(msg.tool_calls)
        """
    assert _codes(source, "DUP508") == [] and _codes(source, "DUP502") == [11]
