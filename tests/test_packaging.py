"""The version is written once, in `tinker_lint/__init__.py`: pyproject.toml takes it from there
(setuptools' dynamic version), and an installed tinker-lint reports the same."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import warnings
from pathlib import Path

import pytest

import tinker_lint

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_takes_the_version_from_the_package():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    dynamic = pyproject["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "tinker_lint.__version__"}


def test_setuptools_resolves_the_version_to_the_package_version():
    # What a build of this checkout writes into the metadata, without building it.
    from setuptools.config.pyprojecttoml import read_configuration

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # older setuptools call [tool.setuptools] "beta"
        config = read_configuration(ROOT / "pyproject.toml", expand=True)
    assert config["project"]["version"] == tinker_lint.__version__


def _is_this_checkout(dist: importlib.metadata.Distribution) -> bool:
    """An editable install of this checkout (its direct_url.json names it), or the egg-info that
    installing it wrote into the checkout."""
    url = json.loads(dist.read_text("direct_url.json") or "{}").get("url")
    return url == ROOT.as_uri() or Path(str(dist.locate_file(""))).resolve() == ROOT


def test_installed_metadata_matches_the_package():
    installed = [
        d for d in importlib.metadata.distributions(name="tinker-lint") if _is_this_checkout(d)
    ]
    if not installed:
        pytest.skip("this checkout is not installed (pip install -e .)")
    assert [d.version for d in installed] == [tinker_lint.__version__] * len(installed)


def test_ci_checks_style_types_layers_then_runs_the_readme_test_command():
    commands = [
        line
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.startswith("python3 ")
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install_and_test = readme.split("```bash\n", 1)[1].splitlines()[1]
    assert commands[-1] == install_and_test.split(" && ", 1)[1]
    checks = [c.split()[2] if c.startswith("python3 -m ") else c for c in commands[1:-1]]
    assert checks[:3] == ["ruff", "ruff", "mypy"]
    assert "lint_imports_command" in checks[3]
