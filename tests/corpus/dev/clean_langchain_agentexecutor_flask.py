from flask import Flask, jsonify, request
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_community.tools import WikipediaQueryRun
from langchain_community.utilities import WikipediaAPIWrapper
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI


@tool
def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


tools = [WikipediaQueryRun(api_wrapper=WikipediaAPIWrapper(top_k_results=2)), word_count]
llm = ChatOpenAI(model="gpt-4o-mini", temperature=0)
prompt = ChatPromptTemplate.from_messages([
    ("system", "You answer trivia questions using Wikipedia."),
    ("placeholder", "{chat_history}"),
    ("human", "{input}"),
    ("placeholder", "{agent_scratchpad}"),
])
agent = create_tool_calling_agent(llm, tools, prompt)
agent_executor = AgentExecutor(agent=agent, tools=tools, max_iterations=5, handle_parsing_errors=True)

app = Flask(__name__)


@app.route("/trivia", methods=["POST"])
def trivia():
    data = request.get_json()
    history = [(m["role"], m["content"]) for m in data.get("history", [])]
    result = agent_executor.invoke({"input": data["question"], "chat_history": history})
    return jsonify(answer=result["output"])
