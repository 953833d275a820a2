from fastapi import FastAPI
from pydantic import BaseModel
from semantic_kernel import Kernel
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
from semantic_kernel.contents import ChatHistory

from .plugins import LightsPlugin, ThermostatPlugin

kernel = Kernel()
chat_service = OpenAIChatCompletion(ai_model_id="gpt-4o", service_id="chat")
kernel.add_service(chat_service)
kernel.add_plugin(LightsPlugin(), plugin_name="lights")
kernel.add_plugin(ThermostatPlugin(), plugin_name="thermostat")

settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())
history = ChatHistory(system_message="You control the smart home. Confirm every change.")

app = FastAPI()


class Command(BaseModel):
    text: str


@app.post("/home/command")
async def command(cmd: Command):
    history.add_user_message(cmd.text)
    result = await chat_service.get_chat_message_content(
        chat_history=history, settings=settings, kernel=kernel
    )
    history.add_message(result)
    return {"reply": str(result)}


@app.get("/home/plugins")
async def plugins():
    return {"plugins": list(kernel.plugins.keys())}
