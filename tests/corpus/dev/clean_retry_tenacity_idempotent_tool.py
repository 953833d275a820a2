"""Payment tool used by the agent; retried safely because the provider dedupes on our key."""
import hashlib
import json

import httpx
from tenacity import retry, stop_after_attempt, wait_random_exponential

API = httpx.Client(base_url="https://api.payments.example", timeout=15)


def _key(call_id: str, args: dict) -> str:
    raw = call_id + json.dumps(args, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


@retry(stop=stop_after_attempt(4), wait=wait_random_exponential(max=10), reraise=True)
def charge_card(call_id: str, customer_id: str, amount_cents: int) -> dict:
    args = {"customer_id": customer_id, "amount_cents": amount_cents}
    resp = API.post(
        "/charges",
        json=args,
        headers={"Idempotency-Key": _key(call_id, args)},
    )
    resp.raise_for_status()
    return resp.json()


def fetch_exchange_rate(currency: str) -> float:
    resp = API.get(f"/rates/{currency}")
    resp.raise_for_status()
    return float(resp.json()["rate"])


TOOL_FUNCS = {
    "charge_card": charge_card,
    "fetch_exchange_rate": fetch_exchange_rate,
}
