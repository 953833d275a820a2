#!/usr/bin/env python
"""Interactive REPL for trying the coding agent locally.

Usage: python scripts/repl.py  (Ctrl-D to quit)
"""
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

from devtools.tools import list_files, read_file, run_tests

llm = ChatOpenAI(model="gpt-4o")


def repl() -> None:
    with SqliteSaver.from_conn_string("repl_state.sqlite") as saver:
        graph = create_react_agent(llm, [list_files, read_file, run_tests], checkpointer=saver)
        config = {"configurable": {"thread_id": "local-repl"}}
        while True:
            try:
                text = input("you> ")
            except EOFError:
                print()
                break
            if not text.strip():
                continue
            for chunk in graph.stream({"messages": [HumanMessage(text)]}, config, stream_mode="values"):
                last = chunk["messages"][-1]
            print(f"agent> {last.content}")


if __name__ == "__main__":
    repl()
