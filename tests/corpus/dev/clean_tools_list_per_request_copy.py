from fastapi import Depends, FastAPI
from pydantic import BaseModel
from strands import Agent, tool

from .auth import User, current_user
from .tools import search_docs, summarize

BASE_TOOLS = (search_docs, summarize)

app = FastAPI()


def user_tools(user: User) -> list:
    @tool
    def my_tickets() -> list[dict]:
        """List the current user's open tickets."""
        return user.open_tickets()

    return [*BASE_TOOLS, my_tickets]


class Ask(BaseModel):
    text: str


@app.post("/assistant")
async def assistant(body: Ask, user: User = Depends(current_user)):
    tools = list(BASE_TOOLS)
    tools.append(user_tools(user)[-1])
    agent = Agent(tools=tools, system_prompt=f"You help {user.name}.", callback_handler=None)
    result = await agent.invoke_async(body.text)
    return {"answer": str(result)}


@app.post("/assistant/v2")
async def assistant_v2(body: Ask, user: User = Depends(current_user)):
    agent = Agent(tools=user_tools(user), callback_handler=None)
    return {"answer": str(await agent.invoke_async(body.text))}
