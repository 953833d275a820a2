"""Case from a public application, rewritten in our own words (no code copied).

Seen in the code index, commit and repository not resolvable there: a Flask medical chatbot's
app.py (LangChain RetrievalQA over a Pinecone index, a local Llama 2 model). A module-level
``chain_type_kwargs`` dict holds the prompt and a window memory, and a second window memory is
bound at module level; the one RetrievalQA chain is built from both at import and every visitor's
``/get`` request runs it, so all visitors share one conversation window.

For DUP108 this is the near-miss: the memory does sit in a module-level configuration dict, but
the dict is used once, at start-up, to build one chain, not copied into a new agent per request.
The defect is the shared chain (DUP101) holding module-level memory (DUP102).
"""

from flask import Flask, render_template, request
from langchain.chains import RetrievalQA
from langchain.memory import ConversationBufferWindowMemory
from langchain_community.llms import CTransformers

from medbot.prompts import QA_PROMPT
from medbot.store import open_vectorstore

app = Flask(__name__)

history = ConversationBufferWindowMemory(k=3)
chain_type_kwargs = {
    "prompt": QA_PROMPT,
    "memory": ConversationBufferWindowMemory(memory_key="history", input_key="question"),
}

llm = CTransformers(model="models/llama-2-7b-chat.q4_0.bin", model_type="llama", config={"temperature": 0.8})

qa_chain = RetrievalQA.from_chain_type(
    llm=llm,
    chain_type="stuff",
    retriever=open_vectorstore().as_retriever(search_kwargs={"k": 2}),
    chain_type_kwargs=chain_type_kwargs,
    memory=history,
)


@app.route("/")
def home():
    return render_template("chat.html")


@app.route("/get", methods=["GET", "POST"])
def chat():
    message = request.form.get("msg")
    if not message:
        return "Missing 'msg'", 400
    answer = qa_chain.invoke({"query": message})
    return str(answer["result"])


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=8080, debug=True)
