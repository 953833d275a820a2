from autogen import AssistantAgent, UserProxyAgent, register_function
from fastapi import FastAPI
from pydantic import BaseModel

from .llm import llm_config
from .tools import convert_currency, get_quote

app = FastAPI()


def build_agents(customer_id: str) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent(
        name="quoter",
        system_message=f"You prepare price quotes for customer {customer_id}. Say TERMINATE at the end.",
        llm_config=llm_config,
    )
    proxy = UserProxyAgent(
        name="proxy",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    for fn in (get_quote, convert_currency):
        register_function(fn, caller=assistant, executor=proxy, description=fn.__doc__ or fn.__name__)
    return assistant, proxy


class QuoteRequest(BaseModel):
    customer_id: str
    request: str


@app.post("/quotes")
def quote(req: QuoteRequest):
    assistant, proxy = build_agents(req.customer_id)
    result = proxy.initiate_chat(assistant, message=req.request, max_turns=6)
    return {"summary": result.summary, "cost": result.cost}
