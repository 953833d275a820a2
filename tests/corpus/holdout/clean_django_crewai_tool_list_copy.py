"""Django view: per-request CrewAI crew; the shared tool list is copied, never mutated."""
import json

from crewai import Agent, Crew, Task
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse

from legal.tools import CaseLawSearchTool, StatuteLookupTool, ClientFilesTool

BASE_TOOLS = [CaseLawSearchTool(), StatuteLookupTool()]


def tools_for(user) -> list:
    tools = list(BASE_TOOLS)
    tools.append(ClientFilesTool(owner_id=user.id))
    return tools


@login_required
def memo(request):
    body = json.loads(request.body)
    counsel = Agent(
        role="Associate",
        goal="Draft a research memo",
        backstory="Careful with citations.",
        tools=tools_for(request.user),
    )
    task = Task(description=body["question"], expected_output="A one-page memo", agent=counsel)
    result = Crew(agents=[counsel], tasks=[task]).kickoff()
    return JsonResponse({"memo": result.raw})
