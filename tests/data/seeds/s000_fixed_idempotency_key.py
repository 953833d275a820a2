# seed 000, BETTER: add an idempotency key per user action (snippet in a handler)
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
app = FastAPI()
@app.post("/chat")
async def chat(payload: dict):
    agent = ReActAgent.from_tools(tools=my_tools)
    message = payload["message"]
    request_id = payload["request_id"]
    if already_processed(request_id):
        return get_cached_result(request_id)
    result = await agent.achat(message)
    store_result(request_id, result)
    return result
