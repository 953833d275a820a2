"""Litestar app: AgentChat 0.4 assistant rebuilt per request from the session's saved state."""
import json

from litestar import Litestar, post
from litestar.datastructures import State
from pydantic import BaseModel
from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient

from tax.tools import deduction_rules, estimate_refund
from tax.store import load_state, save_state

model_client = OpenAIChatCompletionClient(model="gpt-4o")


class Turn(BaseModel):
    session_id: str
    text: str


def make_advisor() -> AssistantAgent:
    return AssistantAgent(
        name="tax_advisor",
        model_client=model_client,
        tools=[deduction_rules, estimate_refund],
        system_message="Explain deductions; estimates only, never file anything.",
    )


@post("/tax/turn")
async def turn(data: Turn, state: State) -> dict:
    advisor = make_advisor()
    saved = await load_state(data.session_id)
    if saved:
        await advisor.load_state(json.loads(saved))
    result = await advisor.run(task=data.text)
    await save_state(data.session_id, json.dumps(await advisor.save_state()))
    return {"reply": result.messages[-1].content}


app = Litestar([turn])
