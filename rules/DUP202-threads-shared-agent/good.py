import threading
from concurrent.futures import ThreadPoolExecutor

from agents import Agent as SdkAgent, Runner
from llama_index.core.agent import ReActAgent
from openai import OpenAI
from strands import Agent

client = OpenAI()
triage = SdkAgent(name="triage", instructions="Route the ticket.")
lock = threading.Lock()
shared = Agent(system_prompt="support")


def answer(question: str) -> str:
    # a fresh agent in every thread
    local = ReActAgent.from_tools(tools=[])
    return str(local.chat(question))


def per_thread_agents(questions: list[str]):
    with ThreadPoolExecutor() as pool:
        return list(pool.map(answer, questions))


def stateless_runs(tickets: list[str]):
    with ThreadPoolExecutor() as pool:
        return list(pool.map(lambda t: Runner.run_sync(triage, t), tickets))


def llm_only(prompts: list[str]):
    with ThreadPoolExecutor() as pool:
        return list(pool.map(lambda p: client.responses.create(model="gpt-4o-mini", input=p), prompts))


def locked(question: str) -> str:
    with lock:
        return str(shared(question))


def serialised_threads(questions: list[str]):
    with ThreadPoolExecutor() as pool:
        return list(pool.map(locked, questions))


def one_background_thread(question: str) -> None:
    threading.Thread(target=shared, args=(question,)).start()
