import chainlit as cl
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_ext.models.openai import OpenAIChatCompletionClient

from .tools import get_stock_price, get_company_news

model_client = OpenAIChatCompletionClient(model="gpt-4o-mini")
assistant = AssistantAgent(
    name="analyst",
    model_client=model_client,
    tools=[get_stock_price, get_company_news],
    system_message="You are a markets analyst. Be brief.",
    reflect_on_tool_use=True,
)


@cl.on_chat_start
async def start():
    cl.user_session.set("transcript", [])
    await cl.Message(content="Ask me about any listed company.").send()


@cl.on_message
async def on_message(message: cl.Message):
    transcript = cl.user_session.get("transcript")
    user_msg = TextMessage(content=message.content, source="user")
    transcript.append(user_msg)
    response = await assistant.on_messages([user_msg], CancellationToken())
    reply = response.chat_message
    transcript.append(reply)
    await cl.Message(content=reply.content).send()
    if response.inner_messages:
        cl.user_session.set("last_tools", [m.content for m in response.inner_messages])
        transcript.append(reply)
