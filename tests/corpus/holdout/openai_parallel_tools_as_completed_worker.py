"""Background enrichment: one model turn may ask for several lookups in parallel."""
import asyncio
import json

from openai import AsyncOpenAI

from enrichment.sources import clearbit_lookup, linkedin_lookup, crunchbase_lookup

client = AsyncOpenAI()
MAX_ROUNDS = 5
FUNCS = {
    "clearbit_lookup": clearbit_lookup,
    "linkedin_lookup": linkedin_lookup,
    "crunchbase_lookup": crunchbase_lookup,
}
TOOL_SPECS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {"domain": {"type": "string"}}}}}
    for n in FUNCS
]


async def _call(tool_call):
    args = json.loads(tool_call.function.arguments)
    value = await FUNCS[tool_call.function.name](**args)
    return tool_call.id, value


async def enrich_company(domain: str) -> str:
    messages = [
        {"role": "system", "content": "Build a company profile. Use the lookups you need."},
        {"role": "user", "content": domain},
    ]
    for _ in range(MAX_ROUNDS):
        resp = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOL_SPECS)
        msg = resp.choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content
        pending = [asyncio.ensure_future(_call(tc)) for tc in msg.tool_calls]
        for fut in asyncio.as_completed(pending):
            call_id, value = await fut
            messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(value)})
    return "incomplete profile"


async def enrich_many(domains: list[str]) -> dict[str, str]:
    profiles = await asyncio.gather(*(enrich_company(d) for d in domains))
    return dict(zip(domains, profiles))
