import anthropic

from .tools import TOOLS, run_tool

client = anthropic.Anthropic()
MAX_ROUNDS = 12


def run_agent(task: str) -> str:
    messages = [{"role": "user", "content": task}]
    rounds = 0
    done: dict[str, str] = {}
    while True:
        rounds += 1
        if rounds > MAX_ROUNDS:
            return "Giving up: too many tool rounds."
        response = client.messages.create(
            model="claude-3-7-sonnet-latest", max_tokens=2048, tools=TOOLS, messages=messages
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return "".join(b.text for b in response.content if b.type == "text")
        results = []
        for block in response.content:
            if block.type != "tool_use":
                continue
            if block.id not in done:
                done[block.id] = str(run_tool(block.name, block.input))
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": done[block.id]})
        messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    import sys

    print(run_agent(" ".join(sys.argv[1:])))
