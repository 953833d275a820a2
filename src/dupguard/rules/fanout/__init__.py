"""Fan-out family (DUP2xx): one stateful agent run by many tasks or threads at once, and
parallel tool results applied in completion order.

One module per rule, named after it (DUP201 and DUP202 share ``shared_agent.py``); each
module's docstring names its rules, and ``docs/rules/index.md`` maps every code to its module.
"""
