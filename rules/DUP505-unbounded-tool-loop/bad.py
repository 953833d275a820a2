import asyncio
import json

import anthropic
import litellm
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI, OpenAI

from .tools import DISPATCH, SCHEMAS, TOOLS, book_table, execute, get_weather, lookup_order, refund_order, run_tool

client = OpenAI()
aclient = AsyncOpenAI()
claude = anthropic.Anthropic()


# raw OpenAI: the model decides when to stop, and nothing stops it
def run(question: str) -> str:
    messages = [{"role": "user", "content": question}]
    while True:  # error: DUP505
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content or ""
        for call in msg.tool_calls:
            fn = DISPATCH[call.function.name]
            output = fn(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)})


# Anthropic: loops as long as the model answers with tool_use
def reconcile(account_id: str) -> str:
    messages = [{"role": "user", "content": f"Reconcile account {account_id}"}]
    response = claude.messages.create(model="claude-3-5-sonnet-latest", max_tokens=2048, tools=TOOLS, messages=messages)
    while response.stop_reason == "tool_use":  # error: DUP505
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": str(run_tool(b.name, b.input))}
            for b in response.content
            if b.type == "tool_use"
        ]
        messages.append({"role": "assistant", "content": response.content})
        messages.append({"role": "user", "content": results})
        response = claude.messages.create(model="claude-3-5-sonnet-latest", max_tokens=2048, tools=TOOLS, messages=messages)
    return "".join(b.text for b in response.content if b.type == "text")


# LangChain: bind_tools + a hand-written loop over ai_msg.tool_calls
def support(question: str) -> str:
    tools_by_name = {t.name: t for t in (lookup_order, refund_order)}
    llm = ChatOpenAI(model="gpt-4o").bind_tools(list(tools_by_name.values()))
    messages = [("user", question)]
    ai_msg = llm.invoke(messages)
    while ai_msg.tool_calls:  # error: DUP505
        messages.append(ai_msg)
        for call in ai_msg.tool_calls:
            result = tools_by_name[call["name"]].invoke(call["args"])
            messages.append(ToolMessage(str(result), tool_call_id=call["id"]))
        ai_msg = llm.invoke(messages)
    return ai_msg.content


# async OpenAI: each round fans out the tool calls
async def run_turn(messages: list) -> str:
    while True:  # error: DUP505
        resp = await aclient.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=SCHEMAS)
        choice = resp.choices[0].message
        if not choice.tool_calls:
            return choice.content
        messages.append(choice.model_dump(exclude_none=True))

        async def run_one(call):
            output = await execute(call.function.name, json.loads(call.function.arguments))
            return {"role": "tool", "tool_call_id": call.id, "content": str(output)}

        messages.extend(await asyncio.gather(*(run_one(c) for c in choice.tool_calls)))


# litellm: a `done` flag set only by the model
def plan_trip(city: str) -> str:
    available_functions = {"get_weather": get_weather, "book_table": book_table}
    messages = [{"role": "user", "content": f"Plan a day in {city}"}]
    done = False
    answer = ""
    while not done:  # error: DUP505
        response = litellm.completion(model="gpt-4o-mini", messages=messages, tools=SCHEMAS)
        message = response.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            done, answer = True, message.content
            continue
        for tool_call in message.tool_calls:
            function_to_call = available_functions[tool_call.function.name]
            function_args = json.loads(tool_call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": tool_call.id,
                             "content": str(function_to_call(**function_args))})
    return answer


# a class-based assistant: model call and tool execution behind helper methods
class SupportBot:
    def __init__(self) -> None:
        self.tools_by_name = {"lookup_order": lookup_order, "refund_order": refund_order}

    def _call_model(self, messages: list):
        return client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message

    def _handle_tool_calls(self, msg) -> list[dict]:
        return [{"role": "tool", "tool_call_id": c.id,
                 "content": str(self.tools_by_name[c.function.name].invoke(json.loads(c.function.arguments)))}
                for c in msg.tool_calls]

    def chat(self, messages: list) -> str:
        while True:  # error: DUP505
            msg = self._call_model(messages)
            if not msg.tool_calls:
                return msg.content
            messages.append(msg)
            messages.extend(self._handle_tool_calls(msg))
