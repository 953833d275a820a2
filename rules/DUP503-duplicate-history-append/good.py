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


def user_then_assistant(history: list, pair: tuple) -> None:
    # two messages of one exchange: pair[0] and pair[1] are different objects
    history.append(pair[0])
    history.append(pair[1])


def rebound_by_unpacking(messages: list, queue: list) -> None:
    msg, meta = queue.pop()
    messages.append(msg)
    msg, meta = queue.pop()  # a tuple target rebinds msg: the next append is another message
    messages.append(msg)


def built_per_append(messages: list, text: str) -> None:
    messages.append(make_message(text))
    messages.append(make_message(text))
