"""CLI: ask Claude to tidy a project's issue tracker, with a capped tool loop."""
import argparse
import json

from anthropic import Anthropic

from tracker import close_issue, list_issues, label_issue

TOOLS = [
    {"name": "list_issues", "description": "List open issues.", "input_schema": {"type": "object", "properties": {}}},
    {"name": "label_issue", "description": "Add a label.", "input_schema": {"type": "object", "properties": {"number": {"type": "integer"}, "label": {"type": "string"}}}},
    {"name": "close_issue", "description": "Close a stale issue.", "input_schema": {"type": "object", "properties": {"number": {"type": "integer"}}}},
]
DISPATCH = {"list_issues": list_issues, "label_issue": label_issue, "close_issue": close_issue}
MAX_STEPS = 12


def tidy(repo: str, client: Anthropic) -> str:
    messages = [{"role": "user", "content": f"Tidy the issues of {repo}: label and close stale ones."}]
    done: dict[str, str] = {}
    for _ in range(MAX_STEPS):
        resp = client.messages.create(model="claude-3-5-sonnet-latest", max_tokens=2048, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": resp.content})
        if resp.stop_reason != "tool_use":
            return "".join(b.text for b in resp.content if b.type == "text")
        results = []
        for block in resp.content:
            if block.type != "tool_use":
                continue
            key = block.name + json.dumps(block.input, sort_keys=True)
            if key not in done:
                done[key] = json.dumps(DISPATCH[block.name](**block.input))
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": done[key]})
        messages.append({"role": "user", "content": results})
    return "stopped after the step limit"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    args = parser.parse_args()
    print(tidy(args.repo, Anthropic()))


if __name__ == "__main__":
    main()
