"""Django view: LangChain chain with message history stored per session id."""
import json

from django.http import JsonResponse
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_openai import ChatOpenAI

_histories: dict[str, InMemoryChatMessageHistory] = {}


def get_history(session_id: str) -> InMemoryChatMessageHistory:
    if session_id not in _histories:
        _histories[session_id] = InMemoryChatMessageHistory()
    return _histories[session_id]


prompt = ChatPromptTemplate.from_messages(
    [("system", "You are a friendly language tutor."), MessagesPlaceholder("history"), ("human", "{input}")]
)
chain = RunnableWithMessageHistory(
    prompt | ChatOpenAI(model="gpt-4o-mini"),
    get_history,
    input_messages_key="input",
    history_messages_key="history",
)


def tutor(request):
    body = json.loads(request.body)
    if not request.session.session_key:
        request.session.save()
    session_id = request.session.session_key
    reply = chain.invoke({"input": body["text"]}, config={"configurable": {"session_id": session_id}})
    return JsonResponse({"reply": reply.content})
