"""aiohttp service exposing a LlamaIndex billing assistant."""
from aiohttp import web
from llama_index.agent.openai import OpenAIAgent
from llama_index.core import Settings
from llama_index.core.callbacks import TokenCountingHandler
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from billing import invoices

llm = OpenAI(model="gpt-4o", temperature=0)


def find_invoice(invoice_id: str) -> dict:
    """Look up an invoice by id."""
    return invoices.get(invoice_id)


def resend_invoice(invoice_id: str, email: str) -> str:
    """Email the invoice PDF to the given address."""
    invoices.send(invoice_id, email)
    return "sent"


TOOLS = [
    FunctionTool.from_defaults(fn=find_invoice),
    FunctionTool.from_defaults(fn=resend_invoice),
]

billing_memory = ChatMemoryBuffer.from_defaults(token_limit=6000)
billing_agent = OpenAIAgent.from_tools(TOOLS, llm=llm, memory=billing_memory, verbose=False)

routes = web.RouteTableDef()


@routes.post("/billing/chat")
async def billing_chat(request: web.Request) -> web.Response:
    payload = await request.json()
    counter = TokenCountingHandler()
    Settings.callback_manager.add_handler(counter)
    response = await billing_agent.achat(payload["message"])
    return web.json_response(
        {"reply": str(response), "tokens": counter.total_llm_token_count}
    )


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"ok": True, "model": llm.model})


def make_app() -> web.Application:
    app = web.Application()
    app.add_routes(routes)
    return app


if __name__ == "__main__":
    web.run_app(make_app(), port=8081)
