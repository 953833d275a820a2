# trap: module-level agents in a script run as __main__ are used by one process, once
import asyncio

from llama_index.core.agent import ReActAgent
from strands import Agent

agent = ReActAgent.from_tools(tools=[])
writer = Agent(system_prompt="writer")


def main() -> None:
    print(agent.chat("summarise the report"))
    print(writer("draft the email"))


if __name__ == "__main__":
    main()
