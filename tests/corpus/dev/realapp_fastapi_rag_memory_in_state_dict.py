"""Case from a public application, rewritten in our own words (no code copied).

Seen in the code index, repository and commit not resolvable there: a FastAPI code-helper RAG
service (LangChain ConversationalRetrievalChain over a FAISS index, a Together-hosted Mixtral).
A module-level ``conversation_state`` dict holds a transcript list and a window memory; the one
chain is built at import with that memory, ``/query`` runs it for every caller and ``/reset``
clears the memory inside the dict, so every client shares one conversation and anyone can wipe
it for everyone.

For DUP108 this is a near-miss: the memory does live in a module-level dict that every request
reads, but nothing copies the dict into a new agent per request; the chain is built once at
start-up and shared, which is DUP101's.
"""

import os

from fastapi import FastAPI, HTTPException
from langchain.chains import ConversationalRetrievalChain
from langchain.memory import ConversationBufferWindowMemory
from langchain_together import Together
from pydantic import BaseModel

from codehelp.index import load_retriever

app = FastAPI()

chat_state = {
    "turns": [],
    "memory": ConversationBufferWindowMemory(k=2, memory_key="chat_history", return_messages=True),
}

llm = Together(model="mistralai/Mixtral-8x7B-Instruct-v0.1", together_api_key=os.environ.get("TOGETHER_KEY"))
rag = ConversationalRetrievalChain.from_llm(llm=llm, memory=chat_state["memory"], retriever=load_retriever())


class Ask(BaseModel):
    question: str


@app.post("/query")
async def query(body: Ask):
    chat_state["turns"].append({"role": "user", "content": body.question})
    try:
        result = rag.invoke(input=body.question)
    except Exception as exc:
        raise HTTPException(status_code=500, detail=str(exc)) from exc
    chat_state["turns"].append({"role": "assistant", "content": result["answer"]})
    return {"response": result["answer"]}


@app.post("/reset")
async def reset():
    chat_state["turns"] = []
    chat_state["memory"].clear()
    return {"message": "conversation reset"}
