from fastapi import FastAPI
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import Memory
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .tools import get_calendar, create_event

llm = OpenAI(model="gpt-4o-mini")

scheduler = FunctionAgent(
    name="scheduler",
    description="Schedules meetings",
    tools=[get_calendar, create_event],
    llm=llm,
    system_prompt="You schedule meetings. Always check the calendar first.",
)

app = FastAPI()


class Req(BaseModel):
    user_id: str
    session_id: str
    text: str


@app.post("/schedule")
async def schedule(req: Req):
    memory = Memory.from_defaults(session_id=f"{req.user_id}:{req.session_id}", token_limit=8000)
    handler = scheduler.run(user_msg=req.text, memory=memory)
    response = await handler
    return {"reply": str(response)}


@app.post("/schedule/oneshot")
async def oneshot(req: Req):
    response = await scheduler.run(req.text)
    return {"reply": str(response)}
