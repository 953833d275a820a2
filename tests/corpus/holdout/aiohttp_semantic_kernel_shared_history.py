"""aiohttp chat endpoint on Semantic Kernel with a plugin for calendar actions."""
from aiohttp import web
from semantic_kernel import Kernel
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
from semantic_kernel.contents import ChatHistory
from semantic_kernel.functions import kernel_function

from calendar_api import gcal


class CalendarPlugin:
    @kernel_function(description="List the user's events for a day.")
    def list_events(self, day: str) -> str:
        return gcal.list(day)

    @kernel_function(description="Create a calendar event.")
    def create_event(self, title: str, start: str, end: str) -> str:
        return gcal.create(title, start, end)


kernel = Kernel()
chat_service = OpenAIChatCompletion(ai_model_id="gpt-4o", service_id="chat")
kernel.add_service(chat_service)
kernel.add_plugin(CalendarPlugin(), plugin_name="calendar")
settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())

history = ChatHistory(system_message="You manage the user's calendar.")


async def chat(request: web.Request) -> web.Response:
    body = await request.json()
    history.add_user_message(body["message"])
    reply = await chat_service.get_chat_message_content(history, settings=settings, kernel=kernel)
    history.add_message(reply)
    return web.json_response({"reply": str(reply)})


app = web.Application()
app.router.add_post("/calendar/chat", chat)
