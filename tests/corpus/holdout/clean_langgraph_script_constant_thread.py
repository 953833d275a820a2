"""One-off maintenance script: walk the release checklist with a LangGraph agent.

Run by the release manager from a terminal; the constant thread lets them resume.
"""
import sys

from langchain_anthropic import ChatAnthropic
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

from release.tools import check_ci, tag_release, publish_notes


def run(question: str) -> str:
    with SqliteSaver.from_conn_string("release.sqlite3") as saver:
        graph = create_react_agent(
            ChatAnthropic(model="claude-3-5-sonnet-latest"),
            tools=[check_ci, tag_release, publish_notes],
            checkpointer=saver,
        )
        state = graph.invoke(
            {"messages": [("user", question)]},
            {"configurable": {"thread_id": "release-checklist"}},
        )
        return state["messages"][-1].content


if __name__ == "__main__":
    print(run(" ".join(sys.argv[1:]) or "What is left on the checklist?"))


def reset() -> None:
    """Start the checklist over (deletes the saved thread)."""
    import os

    if os.path.exists("release.sqlite3"):
        os.remove("release.sqlite3")
