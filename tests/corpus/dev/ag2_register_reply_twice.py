import json
import re
import time

from autogen import Agent, AssistantAgent, LLMConfig, UserProxyAgent

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
AUDIT_LOG = "audit.jsonl"


def redact_pii(message):
    if isinstance(message, str):
        return EMAIL.sub("<email>", message)
    if isinstance(message, dict) and message.get("content"):
        message = dict(message)
        message["content"] = EMAIL.sub("<email>", message["content"])
    return message


def audit_reply(recipient, messages=None, sender=None, config=None):
    """Append every incoming message to the audit log; never produces a reply itself."""
    with open(AUDIT_LOG, "a") as fh:
        fh.write(json.dumps({"ts": time.time(), "to": recipient.name, "msg": messages[-1]}) + "\n")
    return False, None


def build_pair(llm_config: LLMConfig) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("support", llm_config=llm_config)
    proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config=False)
    assistant.register_hook(hookable_method="process_message_before_send", hook=redact_pii)
    proxy.register_hook(hookable_method="process_message_before_send", hook=redact_pii)
    assistant.register_reply([Agent, None], audit_reply, position=0)
    proxy.register_reply([Agent, None], audit_reply, position=0)
    assistant.register_reply([Agent, None], audit_reply, position=0)
    return assistant, proxy


def handle(prompt: str, llm_config: LLMConfig) -> str:
    assistant, proxy = build_pair(llm_config)
    result = proxy.initiate_chat(assistant, message=prompt, max_turns=4)
    return result.summary
