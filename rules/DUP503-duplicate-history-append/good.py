from openai import OpenAI

client = OpenAI()


def turn(messages: list, prompt: str) -> list:
    response = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    reply = response.choices[0].message
    messages.append(reply)
    # a new message object, same name
    reply = {"role": "user", "content": prompt}
    messages.append(reply)
    return messages


def fan_in(messages: list, replies: list) -> None:
    for reply in replies:
        messages.append(reply)


def branches(messages: list, reply: dict, ok: bool) -> None:
    if ok:
        messages.append(reply)
    else:
        messages.append(reply)


def not_a_history(ids: list, item: int) -> None:
    ids.append(item)
    ids.append(item)


def rebound_in_branch(messages: list, msg: dict, retry: bool) -> None:
    messages.append(msg)
    if retry:
        msg = {"role": "user", "content": "try again"}
        messages.append(msg)
