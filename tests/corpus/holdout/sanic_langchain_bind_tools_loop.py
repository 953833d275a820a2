"""Sanic endpoint with a hand-written LangChain tool loop (no AgentExecutor)."""
from sanic import Sanic, json
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from infra import k8s

app = Sanic("infra-bot")


@tool
def pod_status(namespace: str, name: str) -> str:
    """Status of a pod."""
    return k8s.pod_status(namespace, name)


@tool
def restart_deployment(namespace: str, name: str) -> str:
    """Rolling restart of a deployment."""
    return k8s.rollout_restart(namespace, name)


tools_by_name = {t.name: t for t in (pod_status, restart_deployment)}
llm = ChatOpenAI(model="gpt-4o", temperature=0).bind_tools(list(tools_by_name.values()))


@app.post("/infra/ask")
async def ask(request):
    messages = [
        SystemMessage("You are the on-call assistant. Restart only unhealthy deployments."),
        HumanMessage(request.json["question"]),
    ]
    ai = await llm.ainvoke(messages)
    messages.append(ai)
    while ai.tool_calls:
        for call in ai.tool_calls:
            output = tools_by_name[call["name"]].invoke(call["args"])
            messages.append(ToolMessage(content=str(output), tool_call_id=call["id"]))
        ai = await llm.ainvoke(messages)
        messages.append(ai)
    return json({"answer": ai.content})
