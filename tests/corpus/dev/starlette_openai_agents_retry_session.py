from agents import Agent, Runner, SQLiteSession
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential
import openai

from .tools import cancel_booking, create_booking, list_rooms

concierge = Agent(
    name="Concierge",
    instructions="You manage hotel room bookings.",
    tools=[list_rooms, create_booking, cancel_booking],
)


@retry(stop=stop_after_attempt(4), wait=wait_exponential(min=1, max=20),
       retry=retry_if_exception_type(openai.APIConnectionError))
async def run_concierge(text: str, session: SQLiteSession):
    return await Runner.run(concierge, text, session=session)


async def book(request: Request) -> JSONResponse:
    body = await request.json()
    session = SQLiteSession(
        session_id="concierge",
        db_path="conversations.db",
    )
    result = await run_concierge(body["text"], session)
    return JSONResponse({"answer": result.final_output})


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


app = Starlette(routes=[Route("/book", book, methods=["POST"]), Route("/health", health)])
