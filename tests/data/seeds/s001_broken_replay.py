# seed 001, BAD: replaying the same response after failure
from autogen import AssistantAgent
def recover(result, process_tool_calls, retry):
    last_message = result.chat_history[-1]
    if "tool_calls" in last_message:
        process_tool_calls(last_message)   # first execution
        retry()
        process_tool_calls(last_message)   # duplicate execution  # error: DUP502
