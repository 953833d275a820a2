import asyncio

from strands import Agent
from strands.models.anthropic import AnthropicModel

from .tools import read_contract, extract_clauses

MODEL = AnthropicModel(model_id="claude-3-7-sonnet-latest", max_tokens=4096)
TOOLS = [read_contract, extract_clauses]


def reviewer(name: str) -> Agent:
    return Agent(
        name=name,
        model=MODEL,
        tools=TOOLS,
        system_prompt="Review the contract for risky clauses. Be specific.",
        callback_handler=None,
    )


async def review_contracts(contract_ids: list[str]) -> dict[str, str]:
    results: dict[str, asyncio.Task] = {}
    async with asyncio.TaskGroup() as tg:
        for cid in contract_ids:
            results[cid] = tg.create_task(reviewer(f"reviewer-{cid}").invoke_async(f"Review {cid}"))
    return {cid: str(t.result()) for cid, t in results.items()}


async def review_stream(contract_ids: list[str]):
    tasks = [asyncio.create_task(reviewer(cid).invoke_async(f"Review {cid}")) for cid in contract_ids]
    for fut in asyncio.as_completed(tasks):
        yield str(await fut)


if __name__ == "__main__":
    print(asyncio.run(review_contracts(["C-1", "C-2", "C-3"])))
