"""The reader's application, as small real stand-ins, for the docs' runnable examples.

The docs write ``from myapp.tools import search_tool, refund_tool`` and ``from myapp.llm import
llm`` where a real application has its own tools and model. ``tests/test_docs_run.py`` puts
``tests/docs_support`` on ``PYTHONPATH`` when it runs a block, so those imports find these
modules: real llama-index tools and a real llama-index model class, scripted instead of calling
a provider (no network, no key).
"""
