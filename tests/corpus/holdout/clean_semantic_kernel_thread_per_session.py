"""Litestar app: Semantic Kernel ChatCompletionAgent, conversation kept in per-session threads."""
from litestar import Litestar, post
from pydantic import BaseModel
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
from semantic_kernel.connectors.ai.open_ai import AzureChatCompletion

from hr.plugins import PolicyPlugin, PayslipPlugin

agent = ChatCompletionAgent(
    service=AzureChatCompletion(deployment_name="gpt-4o"),
    name="HRHelper",
    instructions="Answer HR questions using the plugins.",
    plugins=[PolicyPlugin(), PayslipPlugin()],
)

threads: dict[str, ChatHistoryAgentThread] = {}


class Ask(BaseModel):
    session_id: str
    message: str


@post("/hr/ask")
async def ask(data: Ask) -> dict:
    thread = threads.get(data.session_id)
    response = await agent.get_response(messages=data.message, thread=thread)
    threads[data.session_id] = response.thread
    return {"reply": str(response.content)}


app = Litestar([ask])
