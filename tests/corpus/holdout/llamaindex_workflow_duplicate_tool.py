"""HR assistant built as a LlamaIndex AgentWorkflow (workflow agents, per-request run)."""
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.anthropic import Anthropic

from hr import directory, leave

llm = Anthropic(model="claude-3-5-sonnet-latest")


def lookup_employee(name: str) -> dict:
    """Find an employee in the directory."""
    return directory.find(name)


def book_leave(employee_id: str, start: str, end: str) -> str:
    """Book annual leave for an employee."""
    return leave.book(employee_id, start, end)


def leave_balance(employee_id: str) -> int:
    """Days of annual leave left."""
    return leave.balance(employee_id)


lookup_tool = FunctionTool.from_defaults(fn=lookup_employee)
book_tool = FunctionTool.from_defaults(fn=book_leave)
balance_tool = FunctionTool.from_defaults(fn=leave_balance)

COMMON_TOOLS = [lookup_tool, balance_tool]

leave_agent = FunctionAgent(
    name="leave",
    description="Books and explains annual leave.",
    tools=COMMON_TOOLS + [book_tool, balance_tool],
    llm=llm,
    system_prompt="Check the balance before booking leave.",
)
directory_agent = FunctionAgent(
    name="directory",
    description="Answers questions about who works where.",
    tools=[lookup_tool],
    llm=llm,
    can_handoff_to=["leave"],
)

workflow = AgentWorkflow(agents=[directory_agent, leave_agent], root_agent="directory")


async def answer(question: str) -> str:
    """Called by the chat backend once per user message."""
    handler = workflow.run(user_msg=question)
    return str(await handler)
