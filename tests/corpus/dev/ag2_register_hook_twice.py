import re

from autogen import AssistantAgent, UserProxyAgent, LLMConfig

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")


def redact_pii(message):
    if isinstance(message, str):
        return EMAIL.sub("<email>", message)
    if isinstance(message, dict) and message.get("content"):
        message = dict(message)
        message["content"] = EMAIL.sub("<email>", message["content"])
    return message


def count_tool_calls(messages):
    counter = sum(1 for m in messages if m.get("tool_calls"))
    print(f"tool calls so far: {counter}")
    return messages


def build_pair(llm_config: LLMConfig) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("support", llm_config=llm_config)
    proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config=False)
    assistant.register_hook(hookable_method="process_message_before_send", hook=redact_pii)
    assistant.register_hook(hookable_method="process_all_messages_before_reply", hook=count_tool_calls)
    proxy.register_hook(hookable_method="process_message_before_send", hook=redact_pii)
    assistant.register_hook(hookable_method="process_message_before_send", hook=redact_pii)
    return assistant, proxy


def handle(prompt: str, llm_config: LLMConfig) -> str:
    assistant, proxy = build_pair(llm_config)
    result = proxy.initiate_chat(assistant, message=prompt, max_turns=4)
    return result.summary
