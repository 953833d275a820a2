from flask import Flask, jsonify, request
import autogen
from autogen import ConversableAgent, register_function

from .warehouse import check_stock, reserve_items

app = Flask(__name__)

config_list = autogen.config_list_from_json("OAI_CONFIG_LIST")

planner = ConversableAgent(
    "planner",
    system_message="Plan warehouse operations. Say DONE when finished.",
    llm_config={"config_list": config_list},
)
runner = ConversableAgent(
    "runner",
    llm_config=False,
    human_input_mode="NEVER",
    is_termination_msg=lambda msg: "DONE" in str(msg.get("content")),
)


def _tools_for(warehouse_id: str):
    def stock(sku: str) -> int:
        return check_stock(warehouse_id, sku)

    def reserve(sku: str, qty: int) -> str:
        return reserve_items(warehouse_id, sku, qty)

    return stock, reserve


@app.route("/warehouses/<warehouse_id>/plan", methods=["POST"])
def plan(warehouse_id):
    body = request.get_json(force=True)
    stock, reserve = _tools_for(warehouse_id)
    for fn in (stock, reserve):
        register_function(fn, caller=planner, executor=runner, description=fn.__name__)
    chat = runner.initiate_chat(planner, message=body["goal"], max_turns=6)
    return jsonify({"summary": chat.summary})


if __name__ == "__main__":
    app.run(debug=True)
