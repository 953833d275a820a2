"""Customer-support platform API: triage, knowledge answers, escalations, summaries."""
from __future__ import annotations

import asyncio
import logging
from functools import lru_cache
from uuid import uuid4

from agents import Agent, Runner
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI as LlamaOpenAI
from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_settings import BaseSettings

from .crm import assign_ticket, get_customer, get_ticket
from .idem import already_processed, get_cached_result, store_result
from .kb import search_articles
from .transcripts import save_transcript

log = logging.getLogger("support")


class Settings(BaseSettings):
    model: str = "gpt-4o-mini"
    escalation_model: str = "gpt-4o"


@lru_cache
def get_settings() -> Settings:
    return Settings()


openai_client = AsyncOpenAI()
llama_llm = LlamaOpenAI(model=get_settings().escalation_model)
ESCALATION_TOOLS = [FunctionTool.from_defaults(fn=f) for f in (get_ticket, get_customer, assign_ticket)]

triage_agent = Agent(
    name="Triage",
    instructions="Classify the ticket as billing, bug, or how-to. Answer with one word.",
    model=get_settings().model,
)

# conversation state for the escalation desk
escalation_memory = ChatMemoryBuffer.from_defaults(token_limit=6000)
kb_sessions: dict[str, ChatMemoryBuffer] = {}

router = APIRouter(prefix="/support")


class TicketIn(BaseModel):
    ticket_id: str
    text: str


class KbQuestion(BaseModel):
    session_id: str
    question: str


@router.post("/triage")
async def triage(ticket: TicketIn):
    result = await Runner.run(triage_agent, ticket.text)
    return {"ticket_id": ticket.ticket_id, "category": result.final_output.strip().lower()}


@router.post("/triage/batch")
async def triage_batch(tickets: list[TicketIn]):
    results = await asyncio.gather(*(Runner.run(triage_agent, t.text) for t in tickets))
    return [{"ticket_id": t.ticket_id, "category": r.final_output} for t, r in zip(tickets, results)]


@router.post("/kb")
async def kb_answer(q: KbQuestion, settings: Settings = Depends(get_settings)):
    memory = kb_sessions.setdefault(q.session_id, ChatMemoryBuffer.from_defaults(token_limit=3000))
    kb_tool = FunctionTool.from_defaults(fn=search_articles)
    agent = ReActAgent.from_tools([kb_tool], llm=LlamaOpenAI(model=settings.model), memory=memory)
    answer = await agent.achat(q.question)
    return {"answer": str(answer)}


@router.post("/escalate")
async def escalate(ticket: TicketIn, idempotency_key: str = Header(...)):
    if already_processed(idempotency_key):
        return get_cached_result(idempotency_key)
    agent = ReActAgent.from_tools(ESCALATION_TOOLS, llm=llama_llm, memory=escalation_memory)
    response = await agent.achat(f"Escalate ticket {ticket.ticket_id}: {ticket.text}")
    body = {"ticket_id": ticket.ticket_id, "note": str(response)}
    store_result(idempotency_key, body)
    return body


@router.post("/summaries")
async def summarize(ticket: TicketIn):
    transcript: list[dict] = [{"role": "system", "content": "Summarize support tickets in 2 lines."}]
    user_msg = {"role": "user", "content": ticket.text}
    transcript.append(user_msg)
    resp = await openai_client.chat.completions.create(model=get_settings().model, messages=transcript)
    summary = resp.choices[0].message
    transcript.append({"role": "assistant", "content": summary.content})
    if summary.refusal:
        log.warning("refusal for %s", ticket.ticket_id)
        raise HTTPException(status_code=422, detail="model refused")
    transcript.append(user_msg)
    await save_transcript(ticket.ticket_id, transcript)
    return {"summary": summary.content, "trace": str(uuid4())}


app = FastAPI(title="support-platform")
app.include_router(router)
