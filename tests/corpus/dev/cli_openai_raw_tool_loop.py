#!/usr/bin/env python3
"""Tiny ops assistant: ask a question, the model calls shell-free ops tools."""
import argparse
import json

from openai import OpenAI

from opskit.tools import TOOL_SCHEMAS, get_pod_status, restart_deployment, tail_logs

client = OpenAI()
DISPATCH = {
    "get_pod_status": get_pod_status,
    "restart_deployment": restart_deployment,
    "tail_logs": tail_logs,
}


def run(question: str, model: str) -> str:
    messages = [
        {"role": "system", "content": "You are an SRE assistant for our Kubernetes cluster."},
        {"role": "user", "content": question},
    ]
    while True:
        response = client.chat.completions.create(model=model, messages=messages, tools=TOOL_SCHEMAS)
        msg = response.choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content or ""
        for call in msg.tool_calls:
            fn = DISPATCH[call.function.name]
            output = fn(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)})
        if any(c.function.name == "restart_deployment" for c in msg.tool_calls):
            # keep the assistant turn next to the restart result for the audit trail
            messages.append(msg)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("question")
    parser.add_argument("--model", default="gpt-4o")
    args = parser.parse_args()
    print(run(args.question, args.model))


if __name__ == "__main__":
    main()
