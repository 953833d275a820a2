"""Library module: retries around model calls that execute no tools."""
import backoff
import openai
from openai import OpenAI
from tenacity import retry, stop_after_attempt, wait_random_exponential

client = OpenAI()


@retry(wait=wait_random_exponential(min=1, max=30), stop=stop_after_attempt(5))
def embed(texts: list[str]) -> list[list[float]]:
    resp = client.embeddings.create(model="text-embedding-3-small", input=texts)
    return [d.embedding for d in resp.data]


@backoff.on_exception(backoff.expo, (openai.RateLimitError, openai.APITimeoutError), max_tries=4)
def summarise(text: str) -> str:
    resp = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "Summarise in three sentences."},
            {"role": "user", "content": text},
        ],
    )
    return resp.choices[0].message.content or ""


def classify(text: str, labels: list[str]) -> str:
    prompt = f"Pick one label from {labels} for:\n{text}\nAnswer with the label only."
    for attempt in range(3):
        try:
            resp = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}], timeout=15
            )
            return (resp.choices[0].message.content or "").strip()
        except openai.APITimeoutError:
            if attempt == 2:
                raise
    return labels[0]
