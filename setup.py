"""Only what pyproject.toml cannot say: ship ``tinker_lint_watchdog.pth`` at the top of
site-packages (a .pth file works only there), for ``TINKER_LINT_WATCHDOG=1`` (docs/watchdog.md).
Everything else is in pyproject.toml."""

from __future__ import annotations

import os

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "tinker_lint_watchdog.pth"
PTH_SOURCE = os.path.join("tinker_lint", "runtime", PTH)


class BuildPyWithPth(build_py):
    """build_py, plus the .pth at the root of the build (so of the wheel, editable or not)."""

    def run(self) -> None:
        super().run()
        self.copy_file(PTH_SOURCE, os.path.join(self.build_lib, PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


setup(cmdclass={"build_py": BuildPyWithPth})
