# seed 000, BAD: naive retry can replay the same tool execution (snippet in a handler)
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
app = FastAPI()
@app.post("/chat")
async def chat(message: str):
    agent = ReActAgent.from_tools(tools=my_tools)
    for _ in range(3):  # error: DUP501
        result = await agent.achat(message)
    return result
