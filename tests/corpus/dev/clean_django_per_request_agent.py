"""assistant/views.py"""
import json

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.views import View
from django.utils.decorators import method_decorator
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.openai import OpenAI
from llama_index.storage.chat_store.postgres import PostgresChatStore

from .tools import account_tools

llm = OpenAI(model="gpt-4o-mini")
chat_store = PostgresChatStore.from_uri(uri="postgresql+asyncpg://app@db/app")


@method_decorator(login_required, name="dispatch")
class AssistantView(View):
    def post(self, request, *args, **kwargs):
        body = json.loads(request.body)
        memory = ChatMemoryBuffer.from_defaults(
            token_limit=3000,
            chat_store=chat_store,
            chat_store_key=f"user-{request.user.pk}",
        )
        agent = ReActAgent.from_tools(account_tools(request.user), llm=llm, memory=memory)
        reply = agent.chat(body["message"])
        return JsonResponse({"reply": str(reply)})

    def delete(self, request, *args, **kwargs):
        chat_store.delete_messages(f"user-{request.user.pk}")
        return JsonResponse({"cleared": True})
