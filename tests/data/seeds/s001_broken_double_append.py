# seed 001, BAD: manual history mutation can duplicate tool invocations
from autogen import AssistantAgent
def persist(messages: list, assistant_reply: dict) -> None:
    messages.append(assistant_reply)
    messages.append(assistant_reply)  # accidental double append  # error: DUP503
