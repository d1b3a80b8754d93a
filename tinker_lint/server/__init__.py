"""``tinker-lint server``: a Language Server over stdio (pygls, the ``server`` extra).

``lint``: the server's state without the protocol: each open file linted by the engine the CLI
uses, with its own settings (nearest configuration, reloaded when it changes), the project index
kept warm and fed the unsaved buffers, and the code actions as text edits. ``convert``: positions
and records in LSP's terms. ``app``: the protocol (pygls), diagnostics pushed or pulled.

A front door: nothing below imports it.
"""
