"""Run flake8 with a chosen set of plugins, whatever else is installed.

flake8 runs every installed plugin whatever ``--select`` says, so "flake8 with no plugin" cannot be
had from flags. This wrapper keeps flake8's own checkers (pyflakes, pycodestyle, mccabe) plus the
plugins named on its command line, and always takes tinker-lint's plugin from this checkout rather
than from an installed copy:

    python bench/flake8_with.py [bugbear,tinker-lint] -- <flake8 arguments>
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

BUILT_IN = {"flake8", "pyflakes", "pycodestyle", "mccabe"}
TINKER_LINT = "tinker-lint"


def main(argv: list[str]) -> int:
    if "--" not in argv:
        sys.stderr.write(__doc__ or "")
        return 2
    split = argv.index("--")
    wanted = {name for part in argv[:split] for name in part.split(",") if name}
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

    from flake8.main.cli import main as flake8_main
    from flake8.plugins import finder

    original = finder.find_plugins

    def find_plugins(cfg, opts):  # the same signature as flake8's
        keep = [
            plugin
            for plugin in original(cfg, opts)
            if plugin.package in BUILT_IN
            or (plugin.package != TINKER_LINT and _short(plugin.package) in wanted)
        ]
        if TINKER_LINT in wanted:
            entry = EntryPoint(
                name="TNK",
                value="tinker_lint.flake8_plugin:TinkerLintPlugin",
                group="flake8.extension",
            )
            keep.append(finder.Plugin(TINKER_LINT, "checkout", entry))
        return sorted(keep)

    finder.find_plugins = find_plugins
    return flake8_main(argv[split + 1 :])


def _short(package: str) -> str:
    """``flake8-bugbear`` -> ``bugbear``; the names users type."""
    return package.removeprefix("flake8-").removeprefix("flake8_")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
