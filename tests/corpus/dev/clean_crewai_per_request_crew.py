from crewai import Agent, Crew, Task
from crewai_tools import SerperDevTool
from fastapi import BackgroundTasks, FastAPI
from pydantic import BaseModel

from .store import save_result

search = SerperDevTool()
app = FastAPI()


def seo_crew(keyword: str) -> Crew:
    analyst = Agent(
        role="SEO analyst",
        goal=f"Find ranking opportunities for '{keyword}'",
        backstory="Ten years of technical SEO.",
        tools=[search],
    )
    task = Task(
        description=f"Analyse the top results for '{keyword}' and list content gaps.",
        expected_output="A bullet list of gaps",
        agent=analyst,
    )
    return Crew(agents=[analyst], tasks=[task], verbose=False)


class Job(BaseModel):
    job_id: str
    keyword: str


def run_job(job: Job) -> None:
    output = seo_crew(job.keyword).kickoff()
    save_result(job.job_id, output.raw)


@app.post("/seo/jobs")
async def create_job(job: Job, background: BackgroundTasks):
    background.add_task(run_job, job)
    return {"accepted": job.job_id}
