from celery import shared_task
from smolagents import InferenceClientModel, ToolCallingAgent, tool

from .models import Report
from .tools import fetch_sales, fetch_returns


@tool
def save_report(title: str, body: str) -> str:
    """Persist a report.

    Args:
        title: Report title.
        body: Markdown body.
    """
    return str(Report.objects.create(title=title, body=body).pk)


BASE_TOOLS = [fetch_sales, fetch_returns, save_report]
model = InferenceClientModel(model_id="Qwen/Qwen2.5-Coder-32B-Instruct")


@shared_task(acks_late=True, reject_on_worker_lost=True)
def weekly_report(region: str, extra_tools: list[str] | None = None) -> str:
    if extra_tools:
        from .tools import load_optional_tools

        BASE_TOOLS.extend(load_optional_tools(extra_tools))
    agent = ToolCallingAgent(tools=BASE_TOOLS, model=model, max_steps=8)
    return agent.run(f"Build the weekly sales report for {region} and save it.")
