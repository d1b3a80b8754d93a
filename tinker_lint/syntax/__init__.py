"""libcst adapters: a faster parse, and node positions worked out statement by statement."""
