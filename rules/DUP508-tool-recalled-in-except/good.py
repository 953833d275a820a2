import json
import logging

import httpx
from crewai.tools import BaseTool
from langchain_core.tools import tool
from openai import OpenAI
from pydantic import ValidationError

from .clients import mailer, sendgrid, ses
from .registry import TOOLS

client = OpenAI()
log = logging.getLogger(__name__)


# the try holds only what can fail before the tool runs; the tool is called once
class ToolRunner:
    def use(self, tool: BaseTool, arguments: dict, config: dict):
        try:
            accepted = tool.args_schema.model_json_schema()["properties"].keys()
            arguments = {k: v for k, v in arguments.items() if k in accepted}
        except Exception:
            log.debug("no argument schema for %s: passing every argument", tool.name)
        return tool.invoke(input=arguments, config=config)


@tool
def send_invoice(customer_id: str, amount: int) -> str:
    """Email an invoice to a customer."""
    return mailer.send_invoice(customer_id, amount)


# errors raised before the tool's body runs: the call never started
def bill(customer_id: str, amount: int, raw: str) -> str:
    try:
        return send_invoice.invoke(json.loads(raw))
    except (ValidationError, TypeError):
        return send_invoice.invoke({"customer_id": customer_id, "amount": amount})


# the failure reported to someone else with the same tool: another action
def bill_or_alert(customer_id: str, amount: int, admin: str) -> str:
    try:
        return send_invoice.invoke({"customer_id": customer_id, "amount": amount})
    except httpx.HTTPError:
        return send_invoice.invoke({"customer_id": admin, "amount": 0})


# a fallback to another provider is another callee
def notify(to: str, body: str) -> str:
    try:
        return sendgrid.send(to, body)
    except httpx.HTTPError:
        return ses.send(to, body)


# a model call retried with a smaller model: no tool runs in it
def answer(messages: list) -> str:
    try:
        return client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content
    except Exception:
        return client.chat.completions.create(model="gpt-4o-mini", messages=messages).choices[0].message.content


# the error goes back to the model as the tool's result
def execute_tool_call(call) -> str:
    try:
        return json.dumps(TOOLS[call.function.name](**json.loads(call.function.arguments)))
    except Exception as exc:
        return json.dumps({"error": str(exc)})
