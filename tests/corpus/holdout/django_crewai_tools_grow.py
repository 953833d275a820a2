"""Django view: per-request CrewAI crew with a user-scoped CRM tool."""
import json

from crewai import Agent, Crew, Task
from crewai.tools import BaseTool
from django.http import JsonResponse
from django.contrib.auth.decorators import login_required

from crm.client import CRM
from sales.tools import CompanySearchTool, NewsTool

SALES_TOOLS = [CompanySearchTool(), NewsTool()]


class AccountNotesTool(BaseTool):
    name: str = "account_notes"
    description: str = "Read the signed-in rep's notes about an account."
    owner_id: int = 0

    def _run(self, account: str) -> str:
        return CRM.for_user(self.owner_id).notes(account)


@login_required
def prospect_brief(request):
    body = json.loads(request.body)
    SALES_TOOLS.append(AccountNotesTool(owner_id=request.user.id))
    researcher = Agent(
        role="Sales researcher",
        goal="Prepare a prospect brief",
        backstory="Knows the CRM inside out.",
        tools=SALES_TOOLS,
    )
    task = Task(
        description=f"Brief on {body['account']} for the rep's next call.",
        expected_output="Five bullet points",
        agent=researcher,
    )
    result = Crew(agents=[researcher], tasks=[task]).kickoff()
    return JsonResponse({"brief": result.raw})
