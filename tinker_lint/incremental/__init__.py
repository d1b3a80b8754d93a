"""What one lint of an editor's buffer keeps for the next lint of it, and nothing in a batch run.

``buffers.py``: the kept state's stores, by buffer, with one bound on how many buffers are kept
and one way to forget a buffer. ``carry.py``: the model's carry-over (``model/facts/carry.py``'s
``Carry`` protocol), handed to the model by the engine: the model never imports this package
(an import-linter contract). The other stages that keep state per buffer (libcst's re-parse,
CPython's verdict, the pre-filters' facts) keep it in stores of ``buffers.py``.
"""
