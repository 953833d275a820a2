# Case from a public repository, rewritten in our own words (no code copied):
# openai/openai-agents-python, src/agents/memory/openai_conversations_session.py at v0.18.2
# (issue #3820, fixed by PR #3821): a session object creates its server-side conversation
# lazily; two coroutines that first use one session both find the id missing, both create a
# conversation, and the history is split between them. Shown here as an application's own
# session wrapper used by a FastAPI route.
from agents import Agent, Runner
from fastapi import FastAPI
from openai import AsyncOpenAI

api = FastAPI()
openai_client = AsyncOpenAI()
helper = Agent(name="helper", instructions="Answer briefly.")


class RemoteConversation:
    def __init__(self, client: AsyncOpenAI, conversation_id: str | None = None):
        self._client = client
        self._conversation_id = conversation_id

    async def ensure_conversation(self) -> str:
        if not self._conversation_id:
            created = await self._client.conversations.create(items=[])
            self._conversation_id = created.id
        return self._conversation_id

    async def add(self, items: list[dict]) -> None:
        conversation = await self.ensure_conversation()
        await self._client.conversations.items.create(conversation_id=conversation, items=items)


shared_conversations: dict[str, RemoteConversation] = {}


@api.post("/converse/{user_id}")
async def converse(user_id: str, payload: dict):
    conversation = shared_conversations.setdefault(user_id, RemoteConversation(openai_client))
    await conversation.add([{"role": "user", "content": payload["message"]}])
    result = await Runner.run(helper, payload["message"])
    await conversation.add([{"role": "assistant", "content": result.final_output}])
    return {"answer": result.final_output}
