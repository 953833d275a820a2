# The shape of agno-agi/agno PR #7377 (one user's Gmail token used for another): a multi-user
# inbox assistant builds its Gmail toolkit once, so the first user's OAuth credentials stay on
# the toolkit and every later user's requests read and send that user's mail.
from agno.agent import Agent
from agno.db.sqlite import SqliteDb
from agno.models.openai import OpenAIChat
from agno.tools.duckduckgo import DuckDuckGoTools
from agno.tools.google import GmailTools
from fastapi import Depends, FastAPI
from pydantic import BaseModel

from .auth import current_user

api = FastAPI()
db = SqliteDb(db_file="inbox.db")

INBOX_TOOLS = [GmailTools(send_email=True), DuckDuckGoTools()]

inbox_assistant = Agent(
    name="Inbox assistant",
    model=OpenAIChat(id="gpt-4o-mini"),
    tools=INBOX_TOOLS,
    db=db,
    instructions=["Triage the user's inbox and draft replies.", "Look facts up on the web when asked."],
)


class Ask(BaseModel):
    message: str
    session_id: str


@api.post("/inbox/ask")
async def ask(body: Ask, user=Depends(current_user)):
    reply = await inbox_assistant.arun(body.message, user_id=user.id, session_id=body.session_id)
    return {"reply": reply.content}


@api.get("/health")
async def health():
    return {"ok": True}
