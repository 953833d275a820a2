"""Embedding + classification helpers for the ingestion pipeline. No tools are involved."""
import backoff
import openai
from openai import OpenAI
from tenacity import retry, stop_after_attempt, wait_exponential

client = OpenAI()
LABELS = ["invoice", "contract", "receipt", "other"]


@retry(stop=stop_after_attempt(5), wait=wait_exponential(min=1, max=30))
def embed(texts: list[str]) -> list[list[float]]:
    resp = client.embeddings.create(model="text-embedding-3-small", input=texts)
    return [d.embedding for d in resp.data]


@backoff.on_exception(backoff.expo, openai.RateLimitError, max_tries=6)
def classify(text: str) -> str:
    resp = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": f"Classify the document as one of {LABELS}. One word."},
            {"role": "user", "content": text[:6000]},
        ],
        temperature=0,
    )
    label = (resp.choices[0].message.content or "other").strip().lower()
    return label if label in LABELS else "other"


def process(docs: list[str]) -> list[dict]:
    vectors = embed(docs)
    return [{"label": classify(d), "vector": v} for d, v in zip(docs, vectors)]
