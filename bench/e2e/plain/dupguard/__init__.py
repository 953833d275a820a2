"""Plain stand-ins for the ``dupguard.runtime`` names the fixed e2e apps use (bench/e2e/overhead.py).

Put this directory first on ``PYTHONPATH`` and the app that ``dupguard fix`` made runs with the
helpers swapped for what an app without them does: the framework's own run, the tools as they
are, no lease, no store. The difference in requests per second is the helpers' overhead.
"""
