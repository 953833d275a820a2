"""Sanic endpoint: an AG2 assistant that files and updates support tickets."""
from sanic import Sanic, json
from sanic.request import Request
from autogen import AssistantAgent, UserProxyAgent, register_function

from helpdesk import tickets

LLM_CONFIG = {"config_list": [{"model": "gpt-4o-mini", "api_type": "openai"}], "temperature": 0}

app = Sanic("helpdesk")

triage = AssistantAgent(
    name="triage",
    system_message="Open or update tickets for the user. Reply TERMINATE when done.",
    llm_config=LLM_CONFIG,
)
executor = UserProxyAgent(
    name="executor",
    human_input_mode="NEVER",
    code_execution_config=False,
    is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    max_consecutive_auto_reply=6,
)


def open_ticket(title: str, body: str) -> str:
    """Open a new support ticket and return its id."""
    return tickets.create(title=title, body=body)


def add_comment(ticket_id: str, text: str) -> str:
    """Add a comment to an existing ticket."""
    tickets.comment(ticket_id, text)
    return "ok"


for fn, desc in ((open_ticket, "Open a ticket"), (add_comment, "Comment on a ticket")):
    register_function(fn, caller=triage, executor=executor, description=desc)


@app.post("/tickets/assist")
async def assist(request: Request):
    message = request.json.get("message", "")
    chat = await executor.a_initiate_chat(triage, message=message, clear_history=True)
    return json({"summary": chat.summary, "cost": chat.cost})


@app.get("/tickets/<ticket_id>")
async def show(request: Request, ticket_id: str):
    return json(tickets.get(ticket_id))
