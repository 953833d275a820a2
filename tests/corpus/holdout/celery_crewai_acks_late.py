"""Celery tasks that run a CrewAI market-research crew for each request."""
from celery import Celery
from crewai import Agent, Crew, Process, Task
from crewai_tools import SerperDevTool

from reports.storage import save_report, notify_requester

celery_app = Celery("research", broker="redis://redis:6379/0", backend="redis://redis:6379/1")
celery_app.conf.task_time_limit = 900


def build_crew(topic: str) -> Crew:
    search = SerperDevTool()
    analyst = Agent(
        role="Market analyst",
        goal=f"Size the market for {topic}",
        backstory="Ten years of sell-side research.",
        tools=[search],
    )
    writer = Agent(
        role="Writer",
        goal="Turn the analysis into a two-page brief",
        backstory="Writes for executives.",
    )
    analyse = Task(description=f"Research {topic}.", expected_output="Key figures", agent=analyst)
    write = Task(description="Write the brief.", expected_output="Markdown brief", agent=writer)
    return Crew(agents=[analyst, writer], tasks=[analyse, write], process=Process.sequential)


@celery_app.task(bind=True, acks_late=True, reject_on_worker_lost=True)
def market_brief(self, request_id: str, topic: str, requester: str) -> str:
    crew = build_crew(topic)
    output = crew.kickoff(inputs={"topic": topic})
    save_report(request_id, output.raw)
    notify_requester(requester, request_id)
    return request_id


@celery_app.task
def purge_old_reports(days: int = 30) -> int:
    from reports.storage import purge_older_than

    return purge_older_than(days)
