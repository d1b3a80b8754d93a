"""``tinker-lint trace LOG_PATH``: what a training run's logs say it cost.

Layers (checked by the import-linter contracts in ``pyproject.toml``), top to bottom:
``command`` (arguments, exit codes) > ``report`` (text, JSON, Perfetto) > ``link`` (the seam to the
static findings) > ``analysis`` (evidence levels, per-step figures, bubbles) > ``timeline`` (pure
interval maths) | ``readers`` (one reader per log format, line by line, with health counters).
The package never imports the rules, the model or the runner; ``link`` takes findings as
``tinker_lint.diagnostics.Diagnostic`` values.
"""
