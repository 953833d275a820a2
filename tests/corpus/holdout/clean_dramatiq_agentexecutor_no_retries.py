"""Dramatiq actor running a LangChain AgentExecutor without memory, retries disabled."""
import dramatiq
from dramatiq.brokers.rabbitmq import RabbitmqBroker
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI

from seo.tools import crawl_page, keyword_volume
from seo.store import save_audit

dramatiq.set_broker(RabbitmqBroker(url="amqp://guest:guest@rabbit:5672"))

llm = ChatOpenAI(model="gpt-4o-mini", temperature=0)
prompt = ChatPromptTemplate.from_messages(
    [
        ("system", "You audit web pages for SEO problems."),
        ("human", "{input}"),
        ("placeholder", "{agent_scratchpad}"),
    ]
)
tools = [crawl_page, keyword_volume]
executor = AgentExecutor(agent=create_tool_calling_agent(llm, tools, prompt), tools=tools, max_iterations=6)


@dramatiq.actor(queue_name="seo", max_retries=0, time_limit=300_000)
def audit_page(url: str) -> None:
    result = executor.invoke({"input": f"Audit {url}"})
    save_audit(url, result["output"])


@dramatiq.actor(queue_name="seo", max_retries=0)
def audit_site(urls: list[str]) -> None:
    """Fan the audit out as one message per page."""
    for url in urls:
        audit_page.send(url)
