# Case from a public repository, rewritten in our own words (no code copied):
# SatuRnBolt/NookIt, ai-service/app/agent/loop.py:244-272 and 93-118 at
# b9e4cc9cfd0b7f01c2b37f7ff4785fcd56598211. A reservation assistant's raw OpenAI tool loop logs every
# tool call in an action table with `idempotency_key=<the tool call's id>`. The id only correlates
# the row with its tool message: a write tool is never run in the loop; it is parked as a pending
# action that runs when the user confirms it, once (the confirm checks the row is still pending),
# and a new message marks any earlier pending action ignored. No guard is keyed by the id. Quiet.
import json

from fastapi import FastAPI, HTTPException
from openai import AsyncOpenAI

from .store import ActionStore

api = FastAPI()
llm = AsyncOpenAI()
actions = ActionStore()
WRITE_TOOLS = {"create_reservation", "cancel_reservation"}


async def run_read_tool(name: str, args: dict) -> dict:
    return {"ok": True, "tool": name, "args": args}


async def next_step(conversation_id: int, messages: list[dict], tools: list[dict]) -> dict:
    reply = (await llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)).choices[0].message
    for call in reply.tool_calls or []:
        args = json.loads(call.function.arguments or "{}")
        if call.function.name in WRITE_TOOLS:
            action = await actions.log_action(
                conversation_id, call.function.name, args, status="pending", idempotency_key=call.id
            )
            return {"pending_action": action.id}
        result = await run_read_tool(call.function.name, args)
        await actions.log_action(conversation_id, call.function.name, args, status="done", idempotency_key=call.id)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    return {"reply": reply.content}


@api.post("/confirm/{action_id}")
async def confirm(action_id: int) -> dict:
    action = await actions.get(action_id)
    if action is None or action.status != "pending":
        raise HTTPException(409, "already handled")
    await actions.mark(action_id, "running")
    return {"ok": True, "action": action_id}
