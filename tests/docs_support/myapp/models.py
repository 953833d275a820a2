"""Scripted models for Strands, the OpenAI Agents SDK and AutoGen AgentChat.

Each answers like :data:`myapp.llm.llm`: the first response of a turn asks for the tool calls
named in the user's message (:func:`myapp.script.tool_calls_for`), each with a fresh id as a
provider gives, and once the tool results are in, it answers with them. They subclass each
framework's own model interface, as the adapters' integration tests (``tests/integration/``) do,
so the agents drive them as they drive a provider's model. Frameworks are imported inside the
factories: importing this module imports none.
"""

from __future__ import annotations

import itertools
import json

from myapp.script import tool_calls_for

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids)}"


def strands_model():
    """A ``strands.models.Model`` that streams scripted Converse-style events."""
    from strands.models import Model

    class ScriptedModel(Model):
        def update_config(self, **model_config):
            pass

        def get_config(self):
            return {}

        async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
            raise NotImplementedError
            yield  # pragma: no cover

        async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
            last_user = max(
                i for i, m in enumerate(messages) if m["role"] == "user" and any("text" in b for b in m["content"])
            )
            answered = any(m["role"] == "assistant" for m in messages[last_user:])
            calls = [] if answered else tool_calls_for(messages[last_user]["content"][0]["text"])
            yield {"messageStart": {"role": "assistant"}}
            if not calls:
                results = [
                    c.get("text", "")
                    for m in messages[last_user:]
                    for b in m["content"]
                    if "toolResult" in b
                    for c in b["toolResult"]["content"]
                ]
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": "; ".join(results) or "done"}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
                return
            for name, arguments in calls:
                yield {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": _new_id("tooluse")}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}

    return ScriptedModel()


def openai_agents_model():
    """An OpenAI Agents SDK ``Model`` (pass it as ``Agent(model=...)``)."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        Response,
        ResponseCompletedEvent,
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class ScriptedModel(Model):
        async def get_response(
            self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs
        ):
            items = [input] if isinstance(input, str) else list(input)
            users = [i for i, item in enumerate(items) if isinstance(item, str) or item.get("role") == "user"]
            last = users[-1]
            text = items[last] if isinstance(items[last], str) else items[last]["content"]
            tail = [item for item in items[last + 1 :] if isinstance(item, dict)]
            calls = [] if tail else tool_calls_for(text if isinstance(text, str) else "")
            if calls:
                output = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        id=f"fc_{call_id}",
                        call_id=call_id,
                        name=name,
                        arguments=json.dumps(arguments),
                        status="completed",
                    )
                    for name, arguments in calls
                    for call_id in [_new_id("call")]
                ]
            else:
                results = [str(item["output"]) for item in tail if item.get("type") == "function_call_output"]
                output = [
                    ResponseOutputMessage(
                        id="msg",
                        type="message",
                        role="assistant",
                        status="completed",
                        content=[
                            ResponseOutputText(type="output_text", text="; ".join(results) or "done", annotations=[])
                        ],
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        async def stream_response(self, *args, **kwargs):
            response = await self.get_response(*args, **kwargs)
            yield ResponseCompletedEvent(
                type="response.completed",
                sequence_number=0,
                response=Response(
                    id="resp",
                    created_at=0,
                    model="scripted",
                    object="response",
                    output=response.output,
                    tool_choice="auto",
                    tools=[],
                    parallel_tool_calls=True,
                ),
            )

    return ScriptedModel()


def autogen_client():
    """An AutoGen ``ChatCompletionClient`` (AutoGen's own replay client, answering per turn)."""
    from autogen_core import FunctionCall
    from autogen_core.models import (
        CreateResult,
        FunctionExecutionResultMessage,
        ModelFamily,
        ModelInfo,
        RequestUsage,
        UserMessage,
    )
    from autogen_ext.models.replay import ReplayChatCompletionClient

    info = ModelInfo(
        vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN, structured_output=False
    )
    usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    class ScriptedClient(ReplayChatCompletionClient):
        async def create(self, messages, **kwargs) -> CreateResult:
            last = messages[-1]
            if isinstance(last, UserMessage) and isinstance(last.content, str):
                calls = tool_calls_for(last.content)
                if calls:
                    content = [
                        FunctionCall(id=_new_id("call"), name=name, arguments=json.dumps(arguments))
                        for name, arguments in calls
                    ]
                    return CreateResult(finish_reason="function_calls", cached=False, usage=usage, content=content)
            results = [
                str(r.content) for r in getattr(last, "content", []) if isinstance(last, FunctionExecutionResultMessage)
            ]
            return CreateResult(finish_reason="stop", cached=False, usage=usage, content="; ".join(results) or "done")

    return ScriptedClient([], model_info=info)
