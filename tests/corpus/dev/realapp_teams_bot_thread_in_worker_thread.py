# Case from a public repository, rewritten in our own words (no code copied):
# cosrv/teams-assistant-bot, src/assistant_manager.py:63-69 with src/bot.py:91 and src/teams_handler.py:62 at
# da5e63da034aac8ea0c11da0c1f7f236a9531693 (bench/real-apps/labels-pub16.toml). A Microsoft Teams assistant
# served by FastAPI hands every personal message to one module-level manager, which keeps a user-id ->
# Assistants-thread map. A missing thread is created with the synchronous OpenAI client in a worker
# thread (`await asyncio.to_thread(...)`) and stored afterwards, without a lock: a user's two first
# messages sent close together both create a thread, and the first one is forgotten.
import asyncio

from fastapi import FastAPI
from openai import OpenAI

app = FastAPI()


class HelpdeskThreads:
    def __init__(self, assistant_id: str) -> None:
        self.openai = OpenAI()
        self.assistant_id = assistant_id
        self.thread_for_user: dict[str, str] = {}

    async def thread_of(self, user_id: str) -> str:
        if user_id not in self.thread_for_user:
            thread = await asyncio.to_thread(self.openai.beta.threads.create)
            self.thread_for_user[user_id] = thread.id
        return self.thread_for_user[user_id]

    async def answer(self, user_id: str, text: str) -> str:
        thread_id = await self.thread_of(user_id)
        await asyncio.to_thread(
            self.openai.beta.threads.messages.create, thread_id=thread_id, role="user", content=text
        )
        run = await asyncio.to_thread(
            self.openai.beta.threads.runs.create_and_poll, thread_id=thread_id, assistant_id=self.assistant_id
        )
        listed = await asyncio.to_thread(self.openai.beta.threads.messages.list, thread_id=run.thread_id, limit=1)
        return listed.data[0].content[0].text.value


helpdesk = HelpdeskThreads("asst_hr")


@app.post("/api/messages")
async def on_message(activity: dict) -> dict:
    reply = await helpdesk.answer(activity["from"]["id"], activity["text"])
    return {"type": "message", "text": reply}
