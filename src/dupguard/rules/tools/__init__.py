"""Tools family (DUP3xx): tools given twice, names reused, tool lists that grow per call.

One module per rule, named after it; each module's docstring names its rule, and
``docs/rules/index.md`` maps every code to its module.
"""
