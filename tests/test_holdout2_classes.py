"""Classes behind the misses of the second holdout (bench/real-apps.md, block ``holdout-2``), one test
each with the counterpart that must stay quiet (or still be reported). The modules are written for
the tests in the shape the cited applications had (repository, path and commit from
bench/real-apps/repos-h2.toml); none is copied.
"""

from __future__ import annotations

import textwrap

from dupguard.config import Settings
from dupguard.pipeline import lint_text
from linthelpers import lint_codes

_codes = lint_codes


# ------------------------------------------------------------------------------ DUP103, ADK


ADK_HELPER = """\
    from fastapi import FastAPI
    from google.adk.agents import Agent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    app = FastAPI()


    class Answerer:
        def __init__(self):
            self.CONVERSATION = "everyone"
            self.runner = Runner(
                agent=Agent(name="answerer", model="gemini-2.0-flash"),
                app_name="answers",
                session_service=InMemorySessionService(),
            )

        def reply(self, text, user):
            return list(self.runner.run(user_id=user, session_id=self.CONVERSATION, new_message=text))

    {make}


    @app.post("/ask")
    def ask(text: str, user: str):
        return {use}.reply(text, user)
    """


def test_adk_session_id_fixed_in_init_of_a_module_level_helper() -> None:
    """Shreyas9400/Discord_Agentic_Bot discord_bot.py:103/195 and web_search_agent.py:124 (bca4d5f):
    a helper class fixes its ADK session id in ``__init__`` (``self.SESSION_ID = "..."``), one
    instance is made at import, and every request runs ``Runner.run`` in that one session. The
    ``self.`` attribute was never read as a constant."""
    source = ADK_HELPER.format(make="answerer = Answerer()", use="answerer")
    assert _codes(source) == [(19, "DUP103")]


def test_adk_session_id_fixed_in_init_of_a_helper_built_per_request() -> None:
    """The counterpart (the same repository's ChatAgent, built per user with its own
    InMemorySessionService): an instance per request has its own store, so its constant key names a
    conversation nobody else reaches."""
    source = ADK_HELPER.format(make="", use="Answerer()")
    assert _codes(source) == []


# ------------------------------------------------------------------------------ Discord bots


DISCORD_BOT = """\
    from discord.ext import commands
    from google.adk.agents import Agent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    bot = commands.Bot(command_prefix="!")
    runner = Runner(
        agent=Agent(name="helper", model="gemini-2.0-flash"),
        app_name="helper",
        session_service=InMemorySessionService(),
    )


    {decorator}
    async def ask(ctx, *, question: str):
        for event in runner.run(user_id="bot", session_id="one-room", new_message=question):
            await ctx.send(str(event))
    """


def test_discord_command_is_a_handler_every_user_runs() -> None:
    """Shreyas9400/Discord_Agentic_Bot discord_bot.py:337 (bca4d5f): ``@bot.command`` functions run
    for every user of the bot, each event as its own task; Discord bots were not a host, so a
    constant ADK session id in one was never per-request code."""
    assert _codes(DISCORD_BOT.format(decorator='@bot.command(name="ask")')) == [(16, "DUP103")]


def test_discord_event_and_listener_are_handlers_too() -> None:
    """The same for ``@bot.event`` and ``@bot.listen(...)`` (discord.py's other two ways in)."""
    assert _codes(DISCORD_BOT.format(decorator="@bot.event")) == [(16, "DUP103")]
    assert _codes(DISCORD_BOT.format(decorator='@bot.listen("on_message")')) == [(16, "DUP103")]


def test_a_plain_function_in_a_bot_file_is_not_a_handler() -> None:
    """The counterpart: without a bot decorator the function is not reached per user."""
    assert _codes(DISCORD_BOT.format(decorator="")) == []


LISTENER_PER_COMMAND = """\
    from discord.ext import commands

    bot = commands.Bot(command_prefix="!")


    @bot.command(name="follow")
    async def follow(ctx):
        room = ctx.channel.id

        {register}
        async def answer(message):
            if message.channel.id == room:
                await message.channel.send("seen")
    """


def test_discord_listener_registered_inside_a_command_piles_up() -> None:
    """Shreyas9400/Discord_Agentic_Bot discord_bot.py:681 (bca4d5f): a command registers an
    ``on_message`` listener with ``@bot.listen`` each time it runs; discord.py appends it to the
    bot's ``extra_events`` and never drops it, so a second run answers every message twice. The
    file imports no agent framework, so it was not even parsed."""
    found = _codes(LISTENER_PER_COMMAND.format(register='@bot.listen("on_message")'))
    assert found == [(10, "DUP401")]


def test_discord_listener_hint_does_not_offer_register_once_for_a_decorator() -> None:
    """The message must not suggest ``register_once(bot, answer, method="listen")``: ``listen``'s
    argument is the event name, not the handler."""
    settings = Settings()
    source = textwrap.dedent(LISTENER_PER_COMMAND.format(register='@bot.listen("on_message")'))
    (diag,) = lint_text("bot.py", source, settings, settings.enabled_codes())
    assert "register_once" not in diag.message


def test_a_nested_function_without_the_listener_decorator_registers_nothing() -> None:
    """The counterpart: the same nested function, not handed to the bot."""
    assert _codes(LISTENER_PER_COMMAND.format(register="")) == []


# ------------------------------------------------------------------------------ DUP401, LlamaIndex


ENGINE_ROUTE = """\
    from fastapi import FastAPI
    from llama_index.core.callbacks import CallbackManager, LlamaDebugHandler

    from .engine import make_engine

    app = FastAPI()


    @app.post("/chat")
    async def chat(text: str):
        engine = make_engine({kwargs})
        engine.callback_manager.{register}(LlamaDebugHandler())
        return await engine.astream_chat(text)
    """


def test_handler_appended_to_the_callback_manager_of_an_engine_built_per_request() -> None:
    """DallanQ/pathway-chatbot backend/app/api/routers/chat.py:140 (86fe924): the engine is made per
    request, but without ``callback_manager=`` a LlamaIndex engine takes the process-wide
    ``Settings.callback_manager``, so appending a handler to its ``handlers`` adds one per request
    to one manager. The local engine read as a per-request target, and ``handlers.append`` was not a
    registration at all."""
    assert _codes(ENGINE_ROUTE.format(kwargs="", register="handlers.append")) == [(12, "DUP401")]
    assert _codes(ENGINE_ROUTE.format(kwargs="", register="add_handler")) == [(12, "DUP401")]


def test_engine_built_with_its_own_callback_manager_is_per_request() -> None:
    """The counterpart: an engine given a manager made for this request keeps its handlers to itself."""
    own = "callback_manager=CallbackManager([])"
    assert _codes(ENGINE_ROUTE.format(kwargs=own, register="handlers.append")) == []
    assert _codes(ENGINE_ROUTE.format(kwargs=own, register="add_handler")) == []


def test_bound_method_handed_to_an_executor_runs_per_request() -> None:
    """Shreyas9400/Discord_Agentic_Bot discord_bot.py:371 (bca4d5f): the command runs
    ``loop.run_in_executor(None, dispatcher.dispatch, query)``; the method is passed, not called,
    so only plain function names carried the handler's context to it before."""
    source = ADK_HELPER.format(make="answerer = Answerer()", use="answerer").replace(
        "return answerer.reply(text, user)",
        "return await asyncio.get_running_loop().run_in_executor(None, answerer.reply, text, user)",
    )
    source = source.replace("def ask(", "async def ask(").replace("from fastapi", "import asyncio\n    from fastapi")
    assert _codes(source) == [(20, "DUP103")]


# ------------------------------------------------------------------------------ DUP103, Streamlit cache


CACHED_START = """\
    import asyncio
    import uuid

    import streamlit as st
    from google.adk.agents import Agent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService


    @st.cache_resource{args}
    def start():
        service = InMemorySessionService()
        runner = Runner(agent=Agent(name="greeter", model="gemini-2.0-flash"), app_name="hi", session_service=service)
        {sid}
        asyncio.run(service.create_session(app_name="hi", user_id="visitor", session_id=sid))
        return runner, sid
    """
_FROM_SESSION = 'sid = st.session_state.setdefault("sid", uuid.uuid4().hex)'


def test_cache_resource_returns_the_first_visitors_adk_session_to_everyone() -> None:
    """ketangoogle/google_adk_streamlit_chat_app services/adk_service.py:24 (3783017): a
    ``@st.cache_resource`` function makes the ADK session id from ``st.session_state`` and returns
    it with the runner; the cache runs it once, so every visitor gets the first one's session."""
    assert _codes(CACHED_START.format(args="", sid=_FROM_SESSION), "svc.py") == [(11, "DUP103")]


def test_session_scoped_cache_is_not_reported() -> None:
    """The counterpart: ``@st.cache_resource(scope="session")`` runs the function once per session."""
    assert _codes(CACHED_START.format(args='(scope="session")', sid=_FROM_SESSION), "svc.py") == []
