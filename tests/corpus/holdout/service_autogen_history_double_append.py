"""Class-based service that relays AgentChat 0.4 replies into a stored transcript."""
from dataclasses import dataclass, field

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_ext.models.anthropic import AnthropicChatCompletionClient

from travel.tools import search_flights, hold_seat


@dataclass
class Transcript:
    conversation_id: str
    messages: list = field(default_factory=list)


class TravelDesk:
    """One TravelDesk per conversation; created by the session layer."""

    def __init__(self, conversation_id: str) -> None:
        self.transcript = Transcript(conversation_id)
        self.agent = AssistantAgent(
            name="travel_desk",
            model_client=AnthropicChatCompletionClient(model="claude-3-5-sonnet-latest"),
            tools=[search_flights, hold_seat],
        )

    async def turn(self, text: str) -> str:
        user_msg = TextMessage(content=text, source="user")
        self.transcript.messages.append(user_msg)
        response = await self.agent.on_messages([user_msg], CancellationToken())
        reply = response.chat_message
        self.transcript.messages.append(reply)
        if response.inner_messages:
            self.transcript.messages.extend(response.inner_messages)
        self.transcript.messages.append(reply)
        return reply.content

    def export(self) -> list[dict]:
        return [{"source": m.source, "content": str(m.content)} for m in self.transcript.messages]
