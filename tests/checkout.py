"""Running this checkout's code in a subprocess (the CLI, flake8 with the plugin, pylsp)."""

from __future__ import annotations

import os

from tests.fixture_expectations import ROOT


def checkout_env() -> dict[str, str]:
    """This process's environment, with the checkout first on ``PYTHONPATH``: a subprocess
    imports this tree's ``tinker_lint``, not an installed one."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env
