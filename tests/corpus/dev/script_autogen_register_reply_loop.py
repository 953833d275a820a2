"""Run the evaluation prompts through the coding assistant and log every reply."""
import json
import sys

import autogen
from autogen import AssistantAgent, UserProxyAgent

config_list = autogen.config_list_from_json("OAI_CONFIG_LIST", filter_dict={"model": ["gpt-4o"]})

assistant = AssistantAgent("coder", llm_config={"config_list": config_list, "cache_seed": None})
user_proxy = UserProxyAgent(
    "runner",
    human_input_mode="NEVER",
    max_consecutive_auto_reply=6,
    code_execution_config={"work_dir": "eval_runs", "use_docker": False},
)


def make_logger(case_id: str, log):
    def log_reply(recipient, messages=None, sender=None, config=None):
        log.write(json.dumps({"case": case_id, "from": sender.name, "msg": messages[-1]}) + "\n")
        return False, None

    return log_reply


def main(path: str) -> None:
    cases = [json.loads(line) for line in open(path)]
    with open("replies.jsonl", "a") as log:
        for case in cases:
            assistant.register_reply([autogen.Agent, None], make_logger(case["id"], log), position=0)
            user_proxy.initiate_chat(assistant, message=case["prompt"], clear_history=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cases.jsonl")
