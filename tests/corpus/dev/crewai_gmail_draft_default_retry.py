"""Meeting-minutes flow: a crew writes the minutes and saves them as a Gmail draft.

Written after Ombhandwalkar/LangChain-projects,
Crew-AI/meeting_minutes/src/meeting_minutes/crews/gmailcrew/gmailcrew.py and
tools/gmail_tool.py at cc516fd8e97a682441257e9ebf45d45b7e2da04f: the draft agent sets no
``max_retry_limit``, so CrewAI's default of 2 re-runs its task, draft creation included, after
an error (crewai 1.15.30, agent/core.py); the tool is named generically, its body creates the
draft.
"""
import os

from crewai import Agent, Crew, Process, Task
from crewai.tools import BaseTool
from pydantic import BaseModel, Field

from .gmail import authenticate, create_draft, create_message


class DraftInput(BaseModel):
    body: str = Field(..., description="The body of the email.")


class GmailTool(BaseTool):
    name: str = "GmailTool"
    description: str = "Saves the minutes as an email draft."
    args_schema: type[BaseModel] = DraftInput

    def _run(self, body: str) -> str:
        service = authenticate()
        message = create_message(os.environ["GMAIL_SENDER"], os.environ["GMAIL_TO"], "Meeting minutes", body)
        draft = create_draft(service, "me", message)
        return f"draft {draft['id']} created"


def build_crew() -> Crew:
    drafter = Agent(
        role="Minutes mailer",
        goal="Put the meeting minutes into a Gmail draft",
        backstory="You format minutes and hand them to the mail tool.",
        tools=[GmailTool()],
        verbose=True,
    )
    draft = Task(
        description="Create a Gmail draft with these minutes: {minutes}",
        expected_output="The id of the draft",
        agent=drafter,
    )
    return Crew(agents=[drafter], tasks=[draft], process=Process.sequential)


def send_minutes(minutes: str) -> str:
    return build_crew().kickoff(inputs={"minutes": minutes}).raw
