"""tinker-lint: a static linter for Tinker SDK training loops."""

__version__ = "0.1.0"
