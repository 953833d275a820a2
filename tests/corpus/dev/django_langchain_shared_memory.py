"""views.py for the `assistant` Django app."""
import json

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from langchain.agents import AgentType, initialize_agent
from langchain.memory import ConversationBufferMemory
from langchain_openai import ChatOpenAI

from .tools import order_lookup_tool, faq_tool

llm = ChatOpenAI(model="gpt-4o-mini", temperature=0)
memory = ConversationBufferMemory(memory_key="chat_history", return_messages=True)


@csrf_exempt
@require_POST
def chat(request: HttpRequest) -> JsonResponse:
    payload = json.loads(request.body)
    agent = initialize_agent(
        [order_lookup_tool, faq_tool],
        llm,
        agent=AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION,
        memory=memory,
        max_iterations=5,
        handle_parsing_errors=True,
    )
    answer = agent.run(input=payload["message"])
    return JsonResponse({"answer": answer, "user": request.user.username})


def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})
