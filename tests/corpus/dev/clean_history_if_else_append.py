from anthropic import Anthropic

from .tools import TOOLS, execute

client = Anthropic()


def chat_turn(history: list[dict], user_text: str, max_steps: int = 5) -> str:
    user_msg = {"role": "user", "content": user_text}
    history.append(user_msg)
    for _ in range(max_steps):
        resp = client.messages.create(model="claude-3-5-sonnet-latest", max_tokens=1024,
                                      tools=TOOLS, messages=history)
        assistant_msg = {"role": "assistant", "content": resp.content}
        if resp.stop_reason == "tool_use":
            history.append(assistant_msg)
            results = [
                {"type": "tool_result", "tool_use_id": b.id, "content": str(execute(b.name, b.input))}
                for b in resp.content if b.type == "tool_use"
            ]
            history.append({"role": "user", "content": results})
        else:
            history.append(assistant_msg)
            return "".join(b.text for b in resp.content if b.type == "text")
    return "(stopped)"


def load_history(rows: list[dict]) -> list[dict]:
    """Rebuild the provider-format history from stored rows (one message per row)."""
    history: list[dict] = []
    for row in rows:
        message = {"role": row["role"], "content": row["content"]}
        if row.get("tool_results"):
            history.append(message)
            history.append({"role": "user", "content": row["tool_results"]})
        else:
            history.append(message)
    return history
