"""Dramatiq worker: smolagents code agent that refreshes product descriptions."""
import dramatiq
from dramatiq.brokers.redis import RedisBroker
from smolagents import CodeAgent, InferenceClientModel, tool

from catalog import products

broker = RedisBroker(url="redis://localhost:6379/2")
dramatiq.set_broker(broker)

MODEL_ID = "Qwen/Qwen2.5-Coder-32B-Instruct"


@tool
def get_product(product_id: str) -> dict:
    """Fetch a product record.

    Args:
        product_id: the catalogue id.
    """
    return products.get(product_id)


@tool
def publish_description(product_id: str, text: str) -> str:
    """Publish a new description to the storefront.

    Args:
        product_id: the catalogue id.
        text: the new description.
    """
    products.publish(product_id, text)
    return "published"


@dramatiq.actor(queue_name="copywriting", time_limit=600_000)
def refresh_description(product_id: str) -> None:
    agent = CodeAgent(
        tools=[get_product, publish_description],
        model=InferenceClientModel(model_id=MODEL_ID),
        max_steps=6,
    )
    agent.run(f"Rewrite and publish the description of product {product_id}.")


@dramatiq.actor(queue_name="copywriting", max_retries=0)
def audit_description(product_id: str) -> None:
    record = products.get(product_id)
    if len(record.get("description", "")) < 40:
        products.mark_for_review(product_id)
