import json

from openai import AssistantEventHandler, OpenAI
from typing_extensions import override

from .tools import call_tool

client = OpenAI()


class ToolRunner(AssistantEventHandler):
    """Text deltas go to the terminal; tools run only when the run asks for them."""

    def __init__(self, thread_id: str) -> None:
        super().__init__()
        self.thread_id = thread_id

    @override
    def on_text_delta(self, delta, snapshot):
        print(delta.value, end="", flush=True)

    @override
    def on_tool_call_created(self, tool_call):
        print(f"\n[calling {tool_call.type}]", flush=True)

    @override
    def on_event(self, event):
        if event.event != "thread.run.requires_action":
            return
        run = event.data
        outputs = []
        for tc in run.required_action.submit_tool_outputs.tool_calls:
            result = call_tool(tc.function.name, json.loads(tc.function.arguments))
            outputs.append({"tool_call_id": tc.id, "output": json.dumps(result)})
        with client.beta.threads.runs.submit_tool_outputs_stream(
            thread_id=self.thread_id, run_id=run.id, tool_outputs=outputs,
            event_handler=ToolRunner(self.thread_id),
        ) as stream:
            stream.until_done()


def ask(thread_id: str, assistant_id: str, text: str) -> None:
    client.beta.threads.messages.create(thread_id=thread_id, role="user", content=text)
    with client.beta.threads.runs.stream(
        thread_id=thread_id, assistant_id=assistant_id, event_handler=ToolRunner(thread_id)
    ) as stream:
        stream.until_done()
