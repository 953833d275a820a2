from agents import Agent, function_tool
from langchain.agents import AgentExecutor
from langchain_core.tools import Tool
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from strands import Agent as StrandsAgent
from strands import tool as strands_tool

from .search import bing_search, internal_search, search_confluence, search_jira
from .shop import invoice_status, order_status

# two tools, two names
tools = [
    Tool(name="intranet_search", func=internal_search, description="Search the intranet"),
    Tool(name="web_search", func=bing_search, description="Search the public web"),
]
executor = AgentExecutor(agent=None, tools=tools)

# one name per agent: the two agents never share a tool set
orders_agent = Agent(name="orders", tools=[function_tool(order_status, name_override="lookup")])
billing_agent = Agent(name="billing", tools=[function_tool(invoice_status, name_override="lookup")])

# no explicit names: the framework names them after their (different) functions
wiki_agent = FunctionAgent(tools=[
    FunctionTool.from_defaults(fn=search_confluence),
    FunctionTool.from_defaults(fn=search_jira),
])


# one of two same-named tools, chosen per deployment
def pick_search(public: bool) -> list:
    if public:
        return [Tool(name="search", func=bing_search, description="Web")]
    return [Tool(name="search", func=internal_search, description="Intranet")]


# names computed at run time are not compared
def regional_tools(regions: list[str]) -> list:
    return [Tool(name=f"search_{r}", func=internal_search, description=r) for r in regions]


@strands_tool
def fetch(url: str) -> str:
    """Fetch a web page."""
    return url


@strands_tool(name="fetch_cached")
def fetch_from_cache(url: str) -> str:
    """Fetch a page from the cache."""
    return url


crawler = StrandsAgent(tools=[fetch, fetch_from_cache])
