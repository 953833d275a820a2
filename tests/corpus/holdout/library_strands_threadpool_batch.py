"""Batch helpers for the compliance team: classify many contracts at once."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from strands import Agent, tool
from strands.models.bedrock import BedrockModel

from compliance.store import load_contract, flag_contract

MAX_WORKERS = 8


@tool
def flag_clause(contract_id: str, clause: str, reason: str) -> str:
    """Flag a clause of a contract for legal review."""
    flag_contract(contract_id, clause, reason)
    return "flagged"


@dataclass
class Verdict:
    contract_id: str
    text: str


def _prompt(contract_id: str) -> str:
    body = load_contract(contract_id)
    return f"Contract {contract_id}. Flag risky clauses, then summarise.\n\n{body}"


def review_contracts(contract_ids: list[str]) -> list[Verdict]:
    """Review every contract with the compliance agent."""
    reviewer = Agent(
        model=BedrockModel(model_id="anthropic.claude-3-5-sonnet-20240620-v1:0"),
        tools=[flag_clause],
        system_prompt="You are a careful contract reviewer.",
    )
    prompts = [_prompt(cid) for cid in contract_ids]
    with ThreadPoolExecutor(max_workers=MAX_WORKERS) as pool:
        outputs = list(pool.map(reviewer, prompts))
    return [Verdict(cid, str(out)) for cid, out in zip(contract_ids, outputs)]


def review_one(contract_id: str) -> Verdict:
    reviewer = Agent(tools=[flag_clause], system_prompt="You are a careful contract reviewer.")
    return Verdict(contract_id, str(reviewer(_prompt(contract_id))))
