from agents import Agent, function_tool
from crewai import Agent as CrewAgent
from crewai.tools import tool as crew_tool
from langchain.agents import AgentExecutor
from langchain_core.tools import Tool, tool
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from strands import Agent as StrandsAgent
from strands import tool as strands_tool

from .search import bing_search, internal_search, search_confluence, search_jira
from .shop import invoice_status, order_status

# LangChain: two Tool objects both called "search"
tools = [
    Tool(name="search", func=internal_search, description="Search the intranet"),
    Tool(name="search", func=bing_search, description="Search the public web"),  # error: DUP302
]
executor = AgentExecutor(agent=None, tools=tools)

# OpenAI Agents SDK: name_override gives two functions one name
support = Agent(
    name="Shop support",
    tools=[
        function_tool(order_status, name_override="lookup"),
        function_tool(invoice_status, name_override="lookup"),  # error: DUP302
    ],
)

# LlamaIndex: a shared tool list with a name clash
SEARCH_TOOLS = [
    FunctionTool.from_defaults(fn=search_confluence, name="search", description="Search the wiki"),
    FunctionTool.from_defaults(fn=search_jira, name="search", description="Search Jira"),  # error: DUP302
]
wiki_agent = FunctionAgent(tools=SEARCH_TOOLS)


# CrewAI: two decorated tools with the same display name
@crew_tool("Company search")
def search_news(company: str) -> str:
    """Search recent news about a company."""
    return bing_search(company)


@crew_tool("Company search")
def search_filings(company: str) -> str:
    """Search regulatory filings of a company."""
    return internal_search(company)


researcher = CrewAgent(role="Researcher", goal="Facts", backstory="Analyst",
                       tools=[search_news, search_filings])  # error: DUP302


# Strands: an explicit name equal to another tool's function name, joined with +
@strands_tool
def fetch(url: str) -> str:
    """Fetch a web page."""
    return url


@strands_tool(name="fetch")
def fetch_cached(url: str) -> str:
    """Fetch a page from the cache."""
    return url


base = [fetch]
crawler = StrandsAgent(tools=base + [fetch_cached])  # error: DUP302


# LangChain: the @tool function name and an explicit Tool name collide
@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return order_id


orders = AgentExecutor(agent=None, tools=[lookup, Tool("lookup", invoice_status, "Invoices")])  # error: DUP302


# OpenAI Agents SDK: the default name (the function's __name__) reused as an override
def refund(order_id: str) -> str:
    """Refund an order."""
    return order_id


def refund_partial(order_id: str, amount: float) -> str:
    """Refund part of an order."""
    return f"{order_id}:{amount}"


billing = Agent(name="billing", tools=[
    function_tool(refund),
    function_tool(refund_partial, name_override="refund"),  # error: DUP302
])
