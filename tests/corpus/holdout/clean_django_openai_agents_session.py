"""Async Django views on the OpenAI Agents SDK with a per-user session."""
import json

from agents import Agent, Runner, SQLiteSession, function_tool
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse

from library.catalog import search_books, reserve_book

SESSIONS_DB = "/var/lib/librarian/sessions.sqlite3"


@function_tool
def find_books(query: str) -> list[dict]:
    """Search the library catalogue."""
    return search_books(query)


@function_tool
def reserve(isbn: str, member_id: str) -> str:
    """Reserve a copy of a book for a member."""
    return reserve_book(isbn, member_id)


librarian = Agent(
    name="Librarian",
    instructions="Help members find and reserve books. Confirm before reserving.",
    tools=[find_books, reserve],
    model="gpt-4o-mini",
)


@login_required
async def chat(request):
    body = json.loads(request.body)
    session = SQLiteSession(f"member-{request.user.pk}", SESSIONS_DB)
    result = await Runner.run(librarian, body["message"], session=session)
    return JsonResponse({"reply": result.final_output})


@login_required
async def reset(request):
    session = SQLiteSession(f"member-{request.user.pk}", SESSIONS_DB)
    await session.clear_session()
    return JsonResponse({"ok": True})
