"""Translate a document into several languages in parallel with one Agents SDK agent."""
import asyncio

from agents import Agent, ModelSettings, Runner
from fastapi import FastAPI
from pydantic import BaseModel

translator = Agent(
    name="Translator",
    instructions="Translate the user's text faithfully. Keep markdown formatting.",
    model="gpt-4.1",
    model_settings=ModelSettings(temperature=0),
)

app = FastAPI()


class TranslationJob(BaseModel):
    text: str
    languages: list[str]


async def translate(text: str, language: str) -> tuple[str, str]:
    result = await Runner.run(translator, f"Target language: {language}\n\n{text}")
    return language, result.final_output


@app.post("/translate")
async def translate_all(job: TranslationJob):
    pairs = await asyncio.gather(*(translate(job.text, lang) for lang in job.languages))
    return dict(pairs)


@app.post("/translate/stream")
async def translate_first(job: TranslationJob):
    tasks = [asyncio.create_task(translate(job.text, lang)) for lang in job.languages]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    language, text = done.pop().result()
    return {"language": language, "text": text}
