"""Local smoke test for the ADK trip planner: python -m planner.smoke "Plan 3 days in Lisbon"."""
import asyncio
import sys

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

from planner.tools import find_hotels, find_sights

sights = LlmAgent(name="sights", model="gemini-2.0-flash", instruction="List sights.", tools=[find_sights])
hotels = LlmAgent(name="hotels", model="gemini-2.0-flash", instruction="Pick hotels.", tools=[find_hotels])
planner = SequentialAgent(name="planner", sub_agents=[sights, hotels])

runner = InMemoryRunner(agent=planner, app_name="planner")


async def main(prompt: str) -> None:
    await runner.session_service.create_session(app_name="planner", user_id="dev", session_id="smoke")
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    events = 0
    async for event in runner.run_async(user_id="dev", session_id="smoke", new_message=message):
        if event.content and event.content.parts:
            for part in event.content.parts:
                if part.text:
                    print(f"[{event.author}] {part.text}")
        events += 1
    print(f"-- {events} events")


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "Plan 3 days in Lisbon"))
