"""Celery task that runs a per-task Strands agent, made safe for redelivery."""
from celery import Celery
from strands import Agent

from dupguard.runtime import Idempotency, RedisBackend
from payouts.tools import get_invoice, send_payout

app = Celery("payouts", broker="redis://redis:6379/0")
app.conf.task_acks_late = True

idem = Idempotency(RedisBackend("redis://redis:6379/3"), ttl=7 * 24 * 3600, lease=120)


def run_payout_agent(invoice_id: str) -> str:
    agent = Agent(
        tools=[get_invoice, send_payout],
        system_prompt="Pay the supplier exactly once, for the invoiced amount.",
        callback_handler=None,
    )
    return str(agent(f"Pay invoice {invoice_id}."))


@app.task(bind=True, acks_late=True, autoretry_for=(ConnectionError,), max_retries=3)
def pay_invoice(self, invoice_id: str) -> str:
    return idem.run(f"payout:{invoice_id}", lambda: run_payout_agent(invoice_id))


@app.task
def nightly_report() -> int:
    from payouts.reports import build_report

    return build_report()
