"""aiohttp endpoint that asks a Strands agent to schedule field visits."""
import logging

from aiohttp import web
from botocore.exceptions import ClientError
from strands import Agent
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from field.tools import find_technician, book_visit, notify_customer

log = logging.getLogger(__name__)


def new_scheduler() -> Agent:
    return Agent(
        tools=[find_technician, book_visit, notify_customer],
        system_prompt="Book one visit per request and notify the customer.",
        callback_handler=None,
    )


@retry(
    stop=stop_after_attempt(3),
    wait=wait_exponential(multiplier=1, max=20),
    retry=retry_if_exception_type(ClientError),
)
async def schedule(request_text: str) -> str:
    agent = new_scheduler()
    result = await agent.invoke_async(request_text)
    return str(result)


async def schedule_visit(request: web.Request) -> web.Response:
    body = await request.json()
    try:
        answer = await schedule(body["request"])
    except ClientError:
        log.exception("bedrock unavailable")
        return web.json_response({"error": "try later"}, status=503)
    return web.json_response({"answer": answer})


app = web.Application()
app.router.add_post("/visits", schedule_visit)
