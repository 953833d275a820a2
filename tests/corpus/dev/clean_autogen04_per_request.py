from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.teams import SelectorGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient
from litestar import Litestar, post
from pydantic import BaseModel

from .tools import query_metrics, query_logs

model_client = OpenAIChatCompletionClient(model="gpt-4o")


def incident_team() -> SelectorGroupChat:
    metrics = AssistantAgent("metrics", model_client=model_client, tools=[query_metrics],
                             description="Reads dashboards")
    logs = AssistantAgent("logs", model_client=model_client, tools=[query_logs],
                          description="Searches logs")
    lead = AssistantAgent("lead", model_client=model_client, description="Writes the incident summary")
    return SelectorGroupChat(
        [metrics, logs, lead],
        model_client=model_client,
        termination_condition=MaxMessageTermination(15),
    )


class Incident(BaseModel):
    service: str
    symptom: str


@post("/incidents/triage")
async def triage(data: Incident) -> dict:
    team = incident_team()
    result = await team.run(task=f"{data.service}: {data.symptom}. Find the root cause.")
    return {"summary": result.messages[-1].content, "stop_reason": result.stop_reason}


app = Litestar(route_handlers=[triage])
