from functools import lru_cache, cache

from fastapi import Depends, FastAPI
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_settings import BaseSettings


class Settings(BaseSettings):
    openai_model: str = "gpt-4o-mini"
    max_tokens: int = 800


@lru_cache
def get_settings() -> Settings:
    return Settings()


@cache
def get_client() -> AsyncOpenAI:
    return AsyncOpenAI()


@lru_cache(maxsize=1)
def get_chat_model() -> ChatOpenAI:
    return ChatOpenAI(model=get_settings().openai_model)


@lru_cache(maxsize=1)
def get_extractor() -> Agent:
    return Agent("openai:gpt-4o-mini", output_type=dict, system_prompt="Extract key fields as JSON.")


app = FastAPI()


class Text(BaseModel):
    text: str


@app.post("/extract")
async def extract(body: Text, extractor: Agent = Depends(get_extractor)):
    result = await extractor.run(body.text)
    return result.output


@app.post("/title")
async def title(body: Text, client: AsyncOpenAI = Depends(get_client), settings: Settings = Depends(get_settings)):
    resp = await client.chat.completions.create(
        model=settings.openai_model, max_tokens=20,
        messages=[{"role": "user", "content": f"Title for: {body.text[:2000]}"}],
    )
    return {"title": resp.choices[0].message.content}


@app.post("/tone")
async def tone(body: Text, chat: ChatOpenAI = Depends(get_chat_model)):
    return {"tone": (await chat.ainvoke(f"One word for the tone of: {body.text}")).content}
