import chainlit as cl
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.workflow import Context
from llama_index.llms.openai import OpenAI

from .tools import lookup_flight, rebook_flight

llm = OpenAI(model="gpt-4o-mini")


@cl.on_chat_start
async def start():
    agent = FunctionAgent(
        tools=[lookup_flight, rebook_flight],
        llm=llm,
        system_prompt="You help passengers rebook disrupted flights.",
    )
    cl.user_session.set("agent", agent)
    cl.user_session.set("ctx", Context(agent))
    await cl.Message(content="Hi! Which booking reference can I help with?").send()


@cl.on_message
async def on_message(message: cl.Message):
    agent: FunctionAgent = cl.user_session.get("agent")
    ctx: Context = cl.user_session.get("ctx")
    handler = agent.run(message.content, ctx=ctx)
    reply = cl.Message(content="")
    async for ev in handler.stream_events():
        delta = getattr(ev, "delta", None)
        if delta:
            await reply.stream_token(delta)
    await handler
    await reply.send()
