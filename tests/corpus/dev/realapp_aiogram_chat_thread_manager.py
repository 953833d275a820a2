# Case from a public repository, rewritten in our own words (no code copied):
# senylar/latoken_hack, chat_gpt_api/assistant.py:38-41 with loader.py and handlers/aa_kb_test.py at
# 84576907ec57e0b3116a556bea9de97558bd2eea (bench/real-apps/labels-pub16.toml). A Telegram bot keeps one
# module-level manager that maps each chat to an OpenAI Assistants thread; the thread is created with
# an await between the membership test and the store. aiogram's polling handles every update as a
# task of its own, so two messages of one chat sent close together both create a thread and the
# second mapping wins. In the original the handlers live in other modules and the class's own module
# only calls it from a `__main__` demo, as here.
import asyncio

from openai import AsyncOpenAI


class ThreadKeeper:
    def __init__(self) -> None:
        self.threads_by_chat: dict[int, str] = {}
        self.openai = AsyncOpenAI()

    async def reply(self, assistant_id: str, chat_id: int, text: str) -> str:
        if chat_id not in self.threads_by_chat:
            created = await self.openai.beta.threads.create()
            self.threads_by_chat[chat_id] = created.id
        thread_id = self.threads_by_chat[chat_id]
        await self.openai.beta.threads.messages.create(thread_id=thread_id, role="user", content=text)
        run = await self.openai.beta.threads.runs.create_and_poll(thread_id=thread_id, assistant_id=assistant_id)
        listed = await self.openai.beta.threads.messages.list(thread_id=run.thread_id)
        return listed.data[0].content[0].text.value


async def try_it() -> None:
    keeper = ThreadKeeper()
    print(await keeper.reply("asst_quiz", 42, "Ask me the first question."))


if __name__ == "__main__":
    asyncio.run(try_it())
