"""Quart app with a module-level assistant service (OpenAI Agents SDK)."""
from quart import Quart, jsonify, request
from agents import Agent, Runner, add_trace_processor, function_tool
from agents.tracing.processors import BatchTraceProcessor

from crm.tools import search_contacts, log_call
from observability.exporters import TenantSpanExporter

app = Quart(__name__)


class AssistantService:
    def __init__(self) -> None:
        self.tools = [search_contacts, log_call]

    def agent_for(self, tenant: str) -> Agent:
        @function_tool(name_override="tenant_settings")
        def tenant_settings() -> dict:
            """Settings of the caller's tenant."""
            from crm.tenants import settings_for

            return settings_for(tenant)

        self.tools.append(tenant_settings)
        return Agent(name="CRM", instructions="Help sales reps use the CRM.", tools=self.tools)


service = AssistantService()


@app.post("/<tenant>/ask")
async def ask(tenant: str):
    data = await request.get_json()
    add_trace_processor(BatchTraceProcessor(TenantSpanExporter(tenant)))
    result = await Runner.run(service.agent_for(tenant), data["question"])
    return jsonify({"answer": result.final_output})
