"""dupguard: find and fix the code that makes LLM agents run the same tool call twice."""

__version__ = "0.1.0"
