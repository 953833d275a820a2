"""Summarization endpoints. Clients are created once and shared; they hold no conversation."""
import os

from anthropic import AsyncAnthropic
from fastapi import FastAPI
from langchain_openai import ChatOpenAI
from llama_index.llms.openai import OpenAI as LlamaOpenAI
from openai import AsyncOpenAI
from pydantic import BaseModel

oai = AsyncOpenAI(api_key=os.environ["OPENAI_API_KEY"], max_retries=2)
claude = AsyncAnthropic()
chat_model = ChatOpenAI(model="gpt-4o-mini", temperature=0)
llama_llm = LlamaOpenAI(model="gpt-4o-mini")

app = FastAPI()


class Doc(BaseModel):
    text: str


@app.post("/summarize/openai")
async def summarize_openai(doc: Doc):
    resp = await oai.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": "Summarize in 3 bullets."}, {"role": "user", "content": doc.text}],
    )
    return {"summary": resp.choices[0].message.content}


@app.post("/summarize/claude")
async def summarize_claude(doc: Doc):
    msg = await claude.messages.create(
        model="claude-3-5-haiku-latest", max_tokens=400,
        messages=[{"role": "user", "content": f"Summarize in 3 bullets:\n{doc.text}"}],
    )
    return {"summary": msg.content[0].text}


@app.post("/summarize/langchain")
async def summarize_langchain(doc: Doc):
    out = await chat_model.ainvoke(f"Summarize in 3 bullets:\n{doc.text}")
    return {"summary": out.content}


@app.post("/summarize/llamaindex")
async def summarize_llamaindex(doc: Doc):
    out = await llama_llm.acomplete(f"Summarize in 3 bullets:\n{doc.text}")
    return {"summary": out.text}
