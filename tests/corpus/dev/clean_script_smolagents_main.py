#!/usr/bin/env python
import sys

from smolagents import CodeAgent, DuckDuckGoSearchTool, InferenceClientModel, tool


@tool
def save_markdown(filename: str, content: str) -> str:
    """Write markdown content to a file.

    Args:
        filename: Target file name.
        content: Markdown text.
    """
    with open(filename, "w", encoding="utf-8") as fh:
        fh.write(content)
    return filename


model = InferenceClientModel(model_id="meta-llama/Llama-3.3-70B-Instruct")
agent = CodeAgent(tools=[DuckDuckGoSearchTool(), save_markdown], model=model, max_steps=10)

QUESTIONS = [
    "What were the three largest open-source LLM releases this month?",
    "Summarize the licensing terms of each.",
]

if __name__ == "__main__":
    topic = sys.argv[1] if len(sys.argv) > 1 else None
    if topic:
        print(agent.run(f"Research {topic} and save a report to report.md"))
    else:
        first = True
        for q in QUESTIONS:
            print(agent.run(q, reset=first))
            first = False
