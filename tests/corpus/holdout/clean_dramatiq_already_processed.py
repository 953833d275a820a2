"""Dramatiq actor: a fresh CrewAI crew per event, skipped when the event was handled."""
import dramatiq
from crewai import Agent, Crew, Task

from incidents.store import already_processed, mark_processed, post_postmortem
from incidents.tools import LogSearchTool, TimelineTool


@dramatiq.actor(queue_name="postmortems", max_retries=3)
def write_postmortem(event_id: str, incident_id: str) -> None:
    if already_processed(event_id):
        return
    analyst = Agent(
        role="SRE",
        goal="Write a blameless postmortem",
        backstory="Has run many incident reviews.",
        tools=[LogSearchTool(), TimelineTool()],
    )
    task = Task(description=f"Postmortem for incident {incident_id}", expected_output="Markdown", agent=analyst)
    output = Crew(agents=[analyst], tasks=[task]).kickoff()
    post_postmortem(incident_id, output.raw)
    mark_processed(event_id)


@dramatiq.actor(queue_name="postmortems", max_retries=0)
def remind_owners(incident_id: str) -> None:
    """Plain notification, no agent: retries are disabled because reminders may repeat."""
    from incidents.store import owners_of
    from incidents.notify import send_reminder

    for owner in owners_of(incident_id):
        send_reminder(owner, incident_id)
