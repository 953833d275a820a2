"""Quart endpoint: translate a document into several languages concurrently.

The OpenAI Agents SDK Agent is configuration; every Runner.run is an independent run.
"""
import asyncio

from quart import Quart, jsonify, request
from agents import Agent, ModelSettings, Runner

app = Quart(__name__)

translator = Agent(
    name="Translator",
    instructions="Translate the user's text faithfully. Keep markdown formatting.",
    model="gpt-4o-mini",
    model_settings=ModelSettings(temperature=0),
)


@app.post("/translate")
async def translate():
    data = await request.get_json()
    languages = data.get("languages", ["de", "fr", "es"])
    runs = [Runner.run(translator, f"Target language: {lang}\n\n{data['text']}") for lang in languages]
    results = await asyncio.gather(*runs)
    return jsonify({lang: r.final_output for lang, r in zip(languages, results)})


@app.post("/translate/one")
async def translate_one():
    data = await request.get_json()
    result = await Runner.run(translator, f"Target language: {data['language']}\n\n{data['text']}")
    return jsonify({"text": result.final_output})
