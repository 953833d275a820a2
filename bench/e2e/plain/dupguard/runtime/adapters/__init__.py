"""Plain adapters: ``tools`` returns the tools, ``run`` is the framework's own run."""
