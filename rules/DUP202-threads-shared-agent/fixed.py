import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from autogen import AssistantAgent, UserProxyAgent
from llama_index.core.agent import ReActAgent
from strands import Agent


def make_agent():
    return ReActAgent.from_tools(tools=[])


def make_bot():
    return Agent(system_prompt="support")
assistant = AssistantAgent(name="assistant", llm_config={"model": "gpt-4o-mini"})


def make_user_proxy():
    return UserProxyAgent(name="user_proxy", human_input_mode="NEVER", code_execution_config=False)


def summarize_all(documents: list[str]):
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda *args, **kwargs: make_agent().chat(*args, **kwargs), documents))


def submit_each(questions: list[str]):
    with ThreadPoolExecutor() as pool:
        futures = [pool.submit(make_bot(), q) for q in questions]
        return [f.result() for f in futures]


def handle_request(prompt: str):
    make_user_proxy().initiate_chat(assistant, message=prompt)


def worker_threads(prompts: list[str]):
    threads = []
    for prompt in prompts:
        thread = threading.Thread(target=handle_request, args=(prompt,))
        threads.append(thread)
        thread.start()


async def to_threads(questions: list[str]):
    return await asyncio.gather(*(asyncio.to_thread(make_bot(), q) for q in questions))


async def executor_lambda(questions: list[str]):
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor() as pool:
        return await asyncio.gather(
            *[loop.run_in_executor(pool, lambda q=q: make_agent().chat(q)) for q in questions]
        )
