from flask import Flask, jsonify, request, session
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter

from .store import load_messages, save_messages
from .tools import lookup_policy

app = Flask(__name__)
app.secret_key = "change-me"

policy_agent = Agent(
    "anthropic:claude-3-5-sonnet-latest",
    system_prompt="Answer HR policy questions. Cite the policy section.",
    tools=[lookup_policy],
)


@app.post("/hr/ask")
def ask():
    conversation_id = session.setdefault("conversation_id", request.headers["X-Request-Id"])
    history_json = load_messages(conversation_id)
    history = ModelMessagesTypeAdapter.validate_json(history_json) if history_json else []
    result = policy_agent.run_sync(request.json["question"], message_history=history)
    save_messages(conversation_id, result.all_messages_json())
    return jsonify(answer=result.output)


@app.post("/hr/reset")
def reset():
    session.pop("conversation_id", None)
    return jsonify(ok=True)


if __name__ == "__main__":
    app.run(port=5001)
