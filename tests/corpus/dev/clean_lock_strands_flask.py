import threading

from flask import Flask, jsonify, request
from strands import Agent
from strands.models.openai import OpenAIModel

from kiosk.tools import print_badge, lookup_visitor

app = Flask(__name__)

# The lobby kiosk has exactly one conversation at a time; the lock makes that explicit.
kiosk_agent = Agent(
    model=OpenAIModel(model_id="gpt-4o-mini"),
    system_prompt="Greet visitors, look them up and print their badge.",
    tools=[lookup_visitor, print_badge],
)
kiosk_lock = threading.Lock()


@app.post("/kiosk/message")
def kiosk_message():
    text = request.json["text"]
    with kiosk_lock:
        result = kiosk_agent(text)
    return jsonify(reply=str(result))


@app.post("/kiosk/reset")
def kiosk_reset():
    with kiosk_lock:
        kiosk_agent.messages.clear()
    return jsonify(ok=True)


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=8000, threaded=True)
