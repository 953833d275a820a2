"""Tool runner of an agent service: filter the model's arguments to the tool's schema, fall back
to the raw arguments when the schema cannot be read.

Rewritten from the shape of CrewAI's own ToolUsage._use / _ause (crewAIInc/crewAI,
lib/crewai/src/crewai/tools/tool_usage.py at f9c92396e63a867b878cfbe9c32ab649204dd487, read as
released in crewai 1.15.30; reported as crewAIInc/crewAI#7449): the fallback's ``try`` also held
the tool call, so a tool that failed after its side effect ran again with unfiltered arguments.
"""
import logging

from crewai.tools import BaseTool

log = logging.getLogger(__name__)


class ToolRunner:
    def __init__(self, tools: list[BaseTool]):
        self.tools = {tool.name: tool for tool in tools}

    def run(self, name: str, arguments: dict, config: dict) -> str:
        tool = self.tools[name]
        try:
            allowed = tool.args_schema.model_json_schema()["properties"].keys()
            filtered = {key: value for key, value in arguments.items() if key in allowed}
            output = tool.invoke(input=filtered, config=config)
        except Exception:
            log.info("could not filter the arguments of %s; passing them as they are", name)
            output = tool.invoke(input=arguments, config=config)
        return str(output)

    async def arun(self, name: str, arguments: dict, config: dict) -> str:
        tool = self.tools[name]
        try:
            allowed = tool.args_schema.model_json_schema()["properties"].keys()
            arguments = {key: value for key, value in arguments.items() if key in allowed}
        except Exception:
            log.info("no schema for %s", name)
        # the fix the upstream PRs made: the tool runs once, outside the fallback
        return str(await tool.ainvoke(input=arguments, config=config))
