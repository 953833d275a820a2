# seed 001, BAD: no lock / lease on job processing
from autogen import AssistantAgent, UserProxyAgent
def handle_request(prompt: str):
    assistant = AssistantAgent(name="assistant", llm_config={"model": "gpt-4o-mini"})
    user_proxy = UserProxyAgent(name="user_proxy", human_input_mode="NEVER")
    user_proxy.initiate_chat(assistant, message=prompt)
def consume(queue):
    job = queue.get()  # error: DUP504
    handle_request(job.prompt)
    queue.ack(job.id)
