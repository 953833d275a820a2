from openai import OpenAI

client = OpenAI()


def turn(messages: list, prompt: str) -> list:
    response = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    assistant_reply = response.choices[0].message
    messages.append(assistant_reply)
    return messages


def record(chat_history: list, reply: dict) -> None:
    chat_history.append(reply)
    print("stored", reply)


def audit_trail(messages: list, msg: dict, restarted: bool) -> None:
    messages.append(msg)
    if restarted:
        print("restart recorded")
