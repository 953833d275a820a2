# %% [markdown]
# # Product-feedback triage (exported notebook)
# Speeds the triage up by asking the agent about each feedback theme in its own thread.

# %%
import threading

from llama_index.core.agent import ReActAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from feedback.store import search_feedback, create_jira_issue

tools = [FunctionTool.from_defaults(fn=search_feedback), FunctionTool.from_defaults(fn=create_jira_issue)]
triage_agent = ReActAgent.from_tools(tools, llm=OpenAI(model="gpt-4o-mini"), max_iterations=10)

# %%
themes = ["checkout errors", "slow search", "dark mode requests", "export to CSV"]
answers: dict[str, str] = {}


def triage(theme: str) -> None:
    answers[theme] = str(
        triage_agent.chat(f"Summarise feedback about {theme}; open one Jira issue if it is a bug.")
    )


# %%
threads = []
for theme in themes:
    t = threading.Thread(target=triage, args=(theme,))
    t.start()
    threads.append(t)
for t in threads:
    t.join()

# %%
for theme, answer in answers.items():
    print(f"{theme}: {answer}\n")
