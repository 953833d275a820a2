"""Generate a data report locally with an AutoGen coder/executor pair.

python report.py sales.csv
"""
import argparse
import os

from autogen import AssistantAgent, UserProxyAgent
from autogen.coding import LocalCommandLineCodeExecutor

llm_config = {"config_list": [{"model": "gpt-4o", "api_key": os.environ["OPENAI_API_KEY"]}]}

coder = AssistantAgent(
    name="coder",
    llm_config=llm_config,
    system_message="Write Python to analyse CSV files. Save charts as PNG. Reply TERMINATE when done.",
)
executor = UserProxyAgent(
    name="executor",
    human_input_mode="NEVER",
    code_execution_config={"executor": LocalCommandLineCodeExecutor(work_dir="report_out")},
    is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
)


def print_messages(recipient, messages=None, sender=None, config=None):
    print(f"--- {sender.name} -> {recipient.name}")
    return False, None


coder.register_reply([UserProxyAgent, None], print_messages, position=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--max-turns", type=int, default=10)
    args = parser.parse_args()
    executor.initiate_chat(coder, message=f"Analyse {args.csv} and plot monthly revenue.",
                           max_turns=args.max_turns)


if __name__ == "__main__":
    main()
