"""Market research crew, kicked off from the Django management command and the API."""
from crewai import Agent, Crew, Process, Task
from crewai_tools import ScrapeWebsiteTool, SerperDevTool, FileWriterTool

search_tool = SerperDevTool()
scrape_tool = ScrapeWebsiteTool()
writer_tool = FileWriterTool()


def build_crew(company: str) -> Crew:
    researcher = Agent(
        role="Market researcher",
        goal=f"Collect recent facts about {company}",
        backstory="You dig through news and company pages.",
        tools=[search_tool, scrape_tool, search_tool],
        allow_delegation=False,
    )
    writer = Agent(
        role="Analyst",
        goal="Write a crisp one-page brief",
        backstory="You turn notes into briefs for sales.",
        tools=[writer_tool],
    )
    research = Task(
        description=f"Research {company}: products, funding, leadership changes.",
        expected_output="Bullet list of facts with sources",
        agent=researcher,
    )
    brief = Task(
        description="Write the brief to brief.md",
        expected_output="A markdown brief",
        agent=writer,
        context=[research],
    )
    return Crew(agents=[researcher, writer], tasks=[research, brief], process=Process.sequential)


def run_brief(company: str) -> str:
    crew = build_crew(company)
    result = crew.kickoff(inputs={"company": company})
    return result.raw
