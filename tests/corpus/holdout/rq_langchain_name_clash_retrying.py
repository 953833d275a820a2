"""RQ job: LangChain tool-calling agent that files expense reports from receipts."""
import logging

from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from openai import APIConnectionError
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_fixed

from expenses import ocr, ledger

log = logging.getLogger(__name__)

prompt = ChatPromptTemplate.from_messages(
    [("system", "File the receipt as an expense."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
)


def file_receipt(receipt_id: str) -> str:
    tools = [
        StructuredTool.from_function(ocr.read_receipt, name="read_receipt", description="OCR a receipt"),
        StructuredTool.from_function(ledger.file_expense, name="file_expense", description="File an expense"),
        StructuredTool.from_function(ledger.file_mileage, name="file_expense", description="File mileage"),
    ]
    agent = create_tool_calling_agent(ChatOpenAI(model="gpt-4o-mini"), tools, prompt)
    executor = AgentExecutor(agent=agent, tools=tools, max_iterations=5)
    for attempt in Retrying(
        stop=stop_after_attempt(3),
        wait=wait_fixed(5),
        retry=retry_if_exception_type(APIConnectionError),
    ):
        with attempt:
            result = executor.invoke({"input": f"Receipt {receipt_id}"})
    log.info("filed %s", receipt_id)
    return result["output"]
