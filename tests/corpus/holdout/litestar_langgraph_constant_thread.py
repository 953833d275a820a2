"""Litestar app serving a LangGraph onboarding assistant with a checkpointer."""
from typing import Any

from litestar import Litestar, post
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.prebuilt import create_react_agent
from pydantic import BaseModel

from accounts import provisioning


@tool
def create_workspace(name: str, owner_email: str) -> str:
    """Provision a new workspace for a customer."""
    return provisioning.create(name, owner_email)


@tool
def invite_member(workspace: str, email: str) -> str:
    """Invite a teammate to a workspace."""
    return provisioning.invite(workspace, email)


graph = create_react_agent(
    ChatOpenAI(model="gpt-4o-mini"),
    tools=[create_workspace, invite_member],
    checkpointer=MemorySaver(),
)


class OnboardRequest(BaseModel):
    user_id: str
    message: str


@post("/onboard")
async def onboard(data: OnboardRequest) -> dict[str, Any]:
    config = {"configurable": {"thread_id": "onboarding"}}
    state = await graph.ainvoke(
        {"messages": [("user", data.message)]},
        config=config,
    )
    return {"reply": state["messages"][-1].content, "user": data.user_id}


app = Litestar(route_handlers=[onboard])
