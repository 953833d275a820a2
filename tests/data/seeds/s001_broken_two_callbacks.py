# seed 001, BAD: tool handling in both callbacks
from autogen import AssistantAgent
def on_delta(event):
    maybe_process_tools(event)
def on_complete(message):
    maybe_process_tools(message)  # error: DUP403
