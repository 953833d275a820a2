import json

from autogen import AssistantAgent, UserProxyAgent

from .tools import TOOL_MAP


def process_tool_calls(message: dict) -> list[dict]:
    results = []
    for call in message.get("tool_calls", []):
        fn = TOOL_MAP[call["function"]["name"]]
        output = fn(**json.loads(call["function"]["arguments"]))
        results.append({"tool_call_id": call["id"], "role": "tool", "content": str(output)})
    return results


def run_pipeline(prompt: str, llm_config: dict) -> list[dict]:
    assistant = AssistantAgent("planner", llm_config=llm_config)
    proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config=False,
                           max_consecutive_auto_reply=0)
    result = proxy.initiate_chat(assistant, message=prompt, max_turns=1)
    messages = list(result.chat_history[:-1])
    last_message = result.chat_history[-1]
    tool_messages = []
    if "tool_calls" in last_message:
        tool_messages += process_tool_calls(last_message)
        if any("error" in m["content"].lower() for m in tool_messages):
            assistant.clear_history()
            tool_messages += process_tool_calls(last_message)
    messages.append(last_message)
    messages.extend(tool_messages)
    messages.append(last_message)
    return messages
