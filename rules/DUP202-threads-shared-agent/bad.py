import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from autogen import AssistantAgent, UserProxyAgent
from llama_index.core.agent import ReActAgent
from strands import Agent

agent = ReActAgent.from_tools(tools=[])
bot = Agent(system_prompt="support")
assistant = AssistantAgent(name="assistant", llm_config={"model": "gpt-4o-mini"})
user_proxy = UserProxyAgent(name="user_proxy", human_input_mode="NEVER", code_execution_config=False)


def summarize_all(documents: list[str]):
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(agent.chat, documents))  # error: DUP202


def submit_each(questions: list[str]):
    with ThreadPoolExecutor() as pool:
        futures = [pool.submit(bot, q) for q in questions]  # error: DUP202
        return [f.result() for f in futures]


def handle_request(prompt: str):
    user_proxy.initiate_chat(assistant, message=prompt)


def worker_threads(prompts: list[str]):
    threads = []
    for prompt in prompts:
        thread = threading.Thread(target=handle_request, args=(prompt,))  # error: DUP202
        threads.append(thread)
        thread.start()


async def to_threads(questions: list[str]):
    return await asyncio.gather(*(asyncio.to_thread(bot, q) for q in questions))  # error: DUP202


async def executor_lambda(questions: list[str]):
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor() as pool:
        return await asyncio.gather(
            *[loop.run_in_executor(pool, lambda q=q: agent.chat(q)) for q in questions]  # error: DUP202
        )
