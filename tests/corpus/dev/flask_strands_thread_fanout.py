import threading

from flask import Blueprint, current_app, jsonify, request
from strands import Agent
from strands.hooks import AfterToolCallEvent

from .audit import post_tool_audit
from .tools import crm_lookup, send_email

bp = Blueprint("outreach", __name__, url_prefix="/outreach")


def build_outreach_agent() -> Agent:
    agent = Agent(
        system_prompt="Draft and send outreach emails to leads.",
        tools=[crm_lookup, send_email],
        callback_handler=None,
    )
    agent.hooks.add_callback(AfterToolCallEvent, post_tool_audit)
    if current_app.config.get("AUDIT_STRICT"):
        agent.hooks.add_callback(AfterToolCallEvent, post_tool_audit)
    return agent


@bp.post("/campaign")
def campaign():
    leads = request.json["leads"]
    agent = build_outreach_agent()
    results: dict[str, str] = {}

    def work(lead_id: str) -> None:
        results[lead_id] = str(agent(f"Write to lead {lead_id} about the spring offer."))

    threads = [
        threading.Thread(target=work, args=(lead,), daemon=True)
        for lead in leads
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return jsonify(results)
