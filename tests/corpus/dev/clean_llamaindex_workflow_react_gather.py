import asyncio as aio

from llama_index.core.agent.workflow import ReActAgent as RA
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from .pricing import competitor_price, our_price

tools = [FunctionTool.from_defaults(fn=competitor_price), FunctionTool.from_defaults(fn=our_price)]
pricing_agent = RA(tools=tools, llm=OpenAI(model="gpt-4o"), verbose=False)


async def compare_skus(skus: list[str]) -> dict[str, str]:
    """Run one independent workflow per SKU; each run gets its own context and memory."""
    handlers = [pricing_agent.run(user_msg=f"Compare our price for {sku} with competitors") for sku in skus]
    results = await aio.gather(*handlers)
    return {sku: str(r) for sku, r in zip(skus, results)}


async def main() -> None:
    report = await compare_skus(["SKU-100", "SKU-200", "SKU-300"])
    for sku, text in report.items():
        print(sku, "->", text)


def lambda_handler(event, context):
    skus = event.get("skus") or []
    if not skus:
        return {"statusCode": 400, "body": "no skus"}
    return {"statusCode": 200, "body": aio.run(compare_skus(skus))}


if __name__ == "__main__":
    aio.run(main())
