from fastapi import FastAPI
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.workflow import Context, JsonSerializer
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .store import load_ctx, save_ctx
from .tools import search_flights, book_flight

llm = OpenAI(model="gpt-4o")
search = FunctionAgent(name="search", description="Finds flights", tools=[search_flights], llm=llm,
                       can_handoff_to=["booking"])
booking = FunctionAgent(name="booking", description="Books flights", tools=[book_flight], llm=llm)
workflow = AgentWorkflow(agents=[search, booking], root_agent="search")

app = FastAPI()


class Turn(BaseModel):
    conversation_id: str
    text: str


@app.post("/travel/turn")
async def travel_turn(turn: Turn):
    saved = await load_ctx(turn.conversation_id)
    if saved:
        ctx = Context.from_dict(workflow, saved, serializer=JsonSerializer())
    else:
        ctx = Context(workflow)
    result = await workflow.run(user_msg=turn.text, ctx=ctx)
    await save_ctx(turn.conversation_id, ctx.to_dict(serializer=JsonSerializer()))
    return {"reply": str(result)}
