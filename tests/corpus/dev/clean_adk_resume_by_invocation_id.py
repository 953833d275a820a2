"""Blog pipeline worker: an ADK run pauses for a human confirmation and is resumed later.

Written after botARPIT/blogify-ai-adk-based, backend/src/agents/pipeline.py at
fc4368820f7b72d32d1ad82e83d1edce29c4275d: the invocation id of the paused run is stored with
the job and handed back to ``runner.run_async(invocation_id=...)`` to resume it (ADK's
resumability API). The id correlates; the job is deduplicated by the client's own
Idempotency-Key and a database lease.
"""
from google.adk.runners import Runner
from google.genai import types

from .db import leases, versions
from .pipeline import blog_app, session_service

CONFIRMATION = "adk_request_confirmation"
runner = Runner(app=blog_app, session_service=session_service)


def find_confirmation(events: list) -> tuple[str | None, str | None]:
    for event in events:
        for call in event.get_function_calls() or []:
            if call.name == CONFIRMATION:
                return event.invocation_id, call.id
    return None, None


async def start(user_id: str, session_id: str, topic: str, idempotency_key: str) -> None:
    if not await leases.acquire(session_id, owner=idempotency_key):
        return
    message = types.Content(role="user", parts=[types.Part(text=topic)])
    events = [e async for e in runner.run_async(user_id=user_id, session_id=session_id, new_message=message)]
    invocation_id, confirmation_id = find_confirmation(events)
    await versions.save_pending(session_id, invocation_id=invocation_id, confirmation_id=confirmation_id)


async def resume(user_id: str, session_id: str, approved: bool) -> None:
    pending = await versions.pending(session_id)
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=pending.confirmation_id, name=CONFIRMATION, response={"confirmed": approved}
                )
            )
        ],
    )
    async for _event in runner.run_async(
        user_id=user_id, session_id=session_id, invocation_id=pending.invocation_id, new_message=answer
    ):
        pass
