"""Django view on a compiled LangGraph graph; one checkpointed thread per signed-in user."""
import json

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent
import sqlite3

from fitness.tools import log_workout, weekly_summary

checkpointer = SqliteSaver(sqlite3.connect("/var/lib/coach/checkpoints.sqlite3", check_same_thread=False))
coach = create_react_agent(
    ChatOpenAI(model="gpt-4o-mini"),
    tools=[log_workout, weekly_summary],
    checkpointer=checkpointer,
    prompt="You are an encouraging fitness coach.",
)


@login_required
def coach_chat(request):
    body = json.loads(request.body)
    config = {"configurable": {"thread_id": f"user-{request.user.pk}"}}
    state = coach.invoke({"messages": [HumanMessage(body["message"])]}, config=config)
    return JsonResponse({"reply": state["messages"][-1].content})


@login_required
def coach_history(request):
    config = {"configurable": {"thread_id": f"user-{request.user.pk}"}}
    snapshot = coach.get_state(config)
    msgs = snapshot.values.get("messages", []) if snapshot else []
    return JsonResponse({"messages": [m.content for m in msgs]})
