"""Near-miss from a public application, rewritten in our own words (no code copied).

OmniGPT-Official/dev-team-poc, services/tool_providers.py at
1465970edb45cdb50c8fb77081674ad0fd26e9e8 and services/tool_injector.py at
044c1b99df7e4a603304ea324427fd3a05f69e8e: a multi-user agno application keeps a module-level
registry of toolkit *factories*; each one looks up the calling user's stored Google OAuth
credentials and builds agno's GmailTools / GoogleSheetsTools with them, and a pre-run hook
builds the toolkits for the user of each run. The app hands them to AgentOS's copy of the agent
for that request; here the hosting is reduced to a route that builds a fresh agent per request.
No toolkit outlives a request, so no user acts with another's account: DUP105 stays quiet.
"""

from typing import Any, Callable, Optional

from agno.agent import Agent
from agno.models.google import Gemini
from agno.tools.gmail import GmailTools
from agno.tools.googlesheets import GoogleSheetsTools
from fastapi import FastAPI

from followups.oauth_store import stored_google_credentials

app = FastAPI()

PROVIDERS: dict[str, Callable[[str], Optional[Any]]] = {}


def provider(name: str):
    def remember(build: Callable[[str], Optional[Any]]):
        PROVIDERS[name] = build
        return build

    return remember


@provider("gmail")
def gmail_for(user_id: str):
    creds = stored_google_credentials(user_id, "gmail")
    return GmailTools(creds=creds) if creds else None


@provider("sheets")
def sheets_for(user_id: str):
    creds = stored_google_credentials(user_id, "sheets")
    return GoogleSheetsTools(creds=creds, enable_read_sheet=True, enable_update_sheet=True) if creds else None


def toolkits_for(user_id: str, *names: str) -> list:
    built = (PROVIDERS[name](user_id) for name in names if name in PROVIDERS)
    return [toolkit for toolkit in built if toolkit is not None]


@app.post("/followups/{user_id}")
async def follow_up(user_id: str, payload: dict):
    agent = Agent(
        name="Email follow-up",
        model=Gemini(id="gemini-2.5-flash"),
        tools=toolkits_for(user_id, "gmail", "sheets"),
        instructions=["Read the contacts sheet, draft follow-ups, and send only the ones the user approves."],
    )
    reply = await agent.arun(payload["message"], user_id=user_id)
    return {"reply": reply.content}
