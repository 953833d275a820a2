import asyncio as aio

from fastapi import FastAPI, UploadFile
from llama_index.core.agent import ReActAgent
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel
from pydantic_ai import Agent

from .tools import ocr_tools

invoice_parser = Agent("openai:gpt-4o", output_type=dict, system_prompt="Parse invoices into JSON.")
llm = OpenAI(model="gpt-4o")
app = FastAPI()


class Parsed(BaseModel):
    fields: dict


@app.post("/invoices/parse")
async def parse(files: list[UploadFile]) -> list[Parsed]:
    texts = [(await f.read()).decode("utf-8", "replace") for f in files]
    results = await aio.gather(*(invoice_parser.run(t) for t in texts))
    return [Parsed(fields=r.output) for r in results]


@app.post("/invoices/ocr")
async def ocr(file: UploadFile) -> dict:
    image_path = f"/tmp/{file.filename}"
    with open(image_path, "wb") as fh:
        fh.write(await file.read())
    agent = ReActAgent.from_tools(ocr_tools(), llm=llm, max_iterations=5)
    answer = await aio.to_thread(agent.chat, f"Read the invoice at {image_path} and list line items")
    return {"items": str(answer)}
