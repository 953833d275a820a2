from fastapi import FastAPI
from pydantic import BaseModel
from semantic_kernel import Kernel
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
from semantic_kernel.connectors.ai.open_ai import AzureChatCompletion
from semantic_kernel.filters import FilterTypes

from .plugins import MenuPlugin, OrderPlugin

kernel = Kernel()
kernel.add_service(AzureChatCompletion(service_id="azure"))
kernel.add_plugin(MenuPlugin(), plugin_name="menu")
kernel.add_plugin(OrderPlugin(), plugin_name="orders")


@kernel.filter(FilterTypes.FUNCTION_INVOCATION)
async def log_calls(context, next):
    print(f"calling {context.function.plugin_name}.{context.function.name}")
    await next(context)


waiter = ChatCompletionAgent(kernel=kernel, name="Waiter", instructions="Take food orders politely.")
threads: dict[str, ChatHistoryAgentThread] = {}

app = FastAPI()


class OrderTurn(BaseModel):
    table_id: str
    text: str


@app.post("/orders/chat")
async def order_chat(turn: OrderTurn):
    thread = threads.get(turn.table_id)
    response = await waiter.get_response(messages=turn.text, thread=thread)
    threads[turn.table_id] = response.thread
    return {"reply": str(response.content)}


@app.post("/orders/{table_id}/close")
async def close_table(table_id: str):
    thread = threads.pop(table_id, None)
    if thread is not None:
        await thread.delete()
    return {"closed": table_id}
