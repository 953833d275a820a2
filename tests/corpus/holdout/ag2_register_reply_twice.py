"""Builds the AG2 agents for the nightly finance close (run as a batch job)."""
import logging

from autogen import Agent, AssistantAgent, UserProxyAgent

from finance.ledger import post_journal_entry
from finance.audit import audit_sink

log = logging.getLogger("close")

LLM_CONFIG = {"config_list": [{"model": "gpt-4o"}], "cache_seed": None}


def audit_reply(recipient, messages=None, sender=None, config=None):
    """Record every message the accountant receives; never produces a reply."""
    if messages:
        audit_sink.write(sender.name if sender else "?", messages[-1])
    return False, None


def build_close_agents() -> tuple[AssistantAgent, UserProxyAgent]:
    accountant = AssistantAgent(
        name="accountant",
        system_message="Prepare and post the month-end journal entries.",
        llm_config=LLM_CONFIG,
    )
    runner = UserProxyAgent(
        name="runner",
        human_input_mode="NEVER",
        code_execution_config=False,
    )
    accountant.register_reply([Agent, None], audit_reply, position=0)
    runner.register_for_execution(name="post_journal_entry")(post_journal_entry)
    accountant.register_for_llm(name="post_journal_entry", description="Post one journal entry")(
        post_journal_entry
    )
    accountant.register_reply([Agent, None], audit_reply, position=0)
    return accountant, runner


def close_month(period: str) -> str:
    accountant, runner = build_close_agents()
    result = runner.initiate_chat(accountant, message=f"Close the books for {period}.")
    log.info("close %s finished: %s", period, result.summary)
    return result.summary


if __name__ == "__main__":
    import sys

    print(close_month(sys.argv[1]))
