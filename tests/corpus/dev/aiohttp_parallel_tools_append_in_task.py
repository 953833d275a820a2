import asyncio
import json

from aiohttp import web
from openai import AsyncOpenAI

from .tools import SCHEMAS, execute

routes = web.RouteTableDef()
openai_client = AsyncOpenAI()


async def run_turn(messages: list, user_text: str) -> str:
    messages.append({"role": "user", "content": user_text})
    while True:
        resp = await openai_client.chat.completions.create(
            model="gpt-4.1-mini", messages=messages, tools=SCHEMAS
        )
        choice = resp.choices[0].message
        if not choice.tool_calls:
            messages.append({"role": "assistant", "content": choice.content})
            return choice.content
        messages.append(choice.model_dump(exclude_none=True))

        async def run_one(call):
            output = await execute(call.function.name, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(output)})

        await asyncio.gather(*(run_one(c) for c in choice.tool_calls))


@routes.post("/v1/turn")
async def turn(request: web.Request) -> web.Response:
    data = await request.json()
    messages = [{"role": "system", "content": "You are a booking assistant."}]
    messages.extend(data.get("history", []))
    answer = await run_turn(messages, data["text"])
    return web.json_response({"answer": answer})


app = web.Application()
app.add_routes(routes)

if __name__ == "__main__":
    web.run_app(app, port=8080)
