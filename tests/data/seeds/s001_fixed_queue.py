# seed 001, Fix: use a lease so one consumer owns each turn
from autogen import AssistantAgent, UserProxyAgent
def handle_request(prompt: str):
    assistant = AssistantAgent(name="assistant", llm_config={"model": "gpt-4o-mini"})
    user_proxy = UserProxyAgent(name="user_proxy", human_input_mode="NEVER")
    user_proxy.initiate_chat(assistant, message=prompt)
def consume(queue):
    job = queue.reserve_with_lease()
    try:
        handle_request(job.prompt)
    finally:
        queue.ack(job.id)
