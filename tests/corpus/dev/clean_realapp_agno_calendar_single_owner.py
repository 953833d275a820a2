# Near-miss from a public application, rewritten in our own words (no code copied):
# timtoronto634/agno-calendar, src/googlecalendar_tools.py and src/web_ui.py (commits
# f14e3af921fef0e96394b1898b1c453cb85fb1a9 and 1184f74829177d6e6d2d61203aa5b2791670814c): one
# module-level agent holds agno's GoogleCalendarTools, which caches the OAuth credentials of the
# first caller, and agno's local Playground serves it. The app is a personal scheduler: one
# calendar owner, no user or session anywhere, so sharing that one account is the design
# (DUP105 near-miss).
import datetime

from agno.agent import Agent
from agno.playground import Playground, serve_playground_app
from agno.tools.googlecalendar import GoogleCalendarTools

scheduler = Agent(
    name="Scheduler",
    tools=[GoogleCalendarTools(credentials_path="./client_secret.json")],
    instructions=[
        f"You manage the owner's calendar. Today is {datetime.date.today():%A %d %B %Y}.",
        "List events for a day, or create an event from the details given.",
    ],
    add_datetime_to_instructions=True,
)

app = Playground(agents=[scheduler]).get_app()


def agenda_for(day: str) -> str:
    return scheduler.run(f"What is on my calendar on {day}?").content


if __name__ == "__main__":
    serve_playground_app("clean_realapp_agno_calendar_single_owner:app", reload=True)
