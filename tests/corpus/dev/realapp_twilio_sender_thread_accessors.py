# Case from a public repository, rewritten in our own words (no code copied):
# brickflows/twilocall, app.py:226-244 at 731e086d7c685479206c868ceb5359f0100ffa78
# (bench/real-apps/labels-pub16.toml). A symptom-triage assistant answers SMS and WhatsApp
# messages through Twilio webhooks; each sender's number is hashed into an id that a module-level
# manager maps to an OpenAI Assistants thread, through a getter and a setter. The thread is
# created with awaits between the lookup and the store and no lock, so two messages a sender
# sends in quick succession (or a webhook Twilio sends again) both create a thread and the second
# mapping wins: the first message's symptoms end up in a thread nothing points at.
import hashlib

from fastapi import FastAPI, Request
from openai import AsyncOpenAI

api = FastAPI()
ASSISTANT_ID = "asst_triage"


class ThreadBook:
    def __init__(self) -> None:
        self._threads_by_sender: dict[str, str] = {}

    def lookup(self, sender_key: str) -> str | None:
        return self._threads_by_sender.get(sender_key)

    def record(self, sender_key: str, thread_id: str) -> None:
        self._threads_by_sender[sender_key] = thread_id

    async def openai(self) -> AsyncOpenAI:
        client = AsyncOpenAI()
        await client.models.list()  # fail early when the key is wrong
        return client

    async def thread_for(self, sender_key: str) -> str:
        existing = self.lookup(sender_key)
        if existing is not None:
            return existing
        client = await self.openai()
        thread = await client.beta.threads.create()
        self.record(sender_key, thread.id)
        return thread.id


book = ThreadBook()


@api.post("/twilio/inbound")
async def inbound(request: Request) -> dict:
    form = await request.form()
    sender_key = hashlib.sha256(str(form["From"]).encode()).hexdigest()[:16]
    thread_id = await book.thread_for(sender_key)
    client = AsyncOpenAI()
    await client.beta.threads.messages.create(thread_id=thread_id, role="user", content=str(form["Body"]))
    run = await client.beta.threads.runs.create_and_poll(thread_id=thread_id, assistant_id=ASSISTANT_ID)
    return {"status": run.status}
