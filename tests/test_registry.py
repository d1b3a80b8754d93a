"""The code registry (``tinker_lint.codes``) agrees with the rule classes, and what reads it (config
validation, reporters) does so without importing the rules or libcst."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tinker_lint.rules
from tinker_lint import codes
from tinker_lint.codes import REGISTRY, Kind
from tinker_lint.rules import DEPENDENCY_RULES, DOCUMENTED_RULES, PYTHON_RULES, rule_class
from tinker_lint.rules.base import Rule

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


def _rule_classes_defined_in_the_package() -> dict[str, type[Rule]]:
    """Every ``Rule`` subclass any module of ``tinker_lint.rules`` defines, found by importing
    them all (what the registry avoids)."""
    found: dict[str, type[Rule]] = {}
    for info in pkgutil.walk_packages(tinker_lint.rules.__path__, "tinker_lint.rules."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{value.__name__}"] = value
    return found


def test_every_rule_class_is_registered_with_its_code_and_name():
    classes = _rule_classes_defined_in_the_package()
    assert len(classes) == len(codes.RULE_CODES)
    for path, rule in classes.items():
        entry = REGISTRY.get(rule.code)
        assert entry is not None, f"{path} declares {rule.code}, which is not registered"
        assert (entry.name, entry.module) == (rule.name, rule.__module__), path
        assert rule_class(rule.code) is rule


def test_every_registered_rule_imports_to_its_class():
    for code, entry in REGISTRY.items():
        if entry.kind is Kind.ENGINE:
            assert entry.module is None and not entry.fixable, code
            continue
        rule = rule_class(code)
        assert (rule.code, rule.name) == (code, entry.name)
        assert entry.family == codes.FAMILIES[code[3]][0]
        # A dependency-file rule is judged by its known-bad entry; a Python rule by its check.
        assert (rule.known_bad() is not None) == (entry.kind is Kind.DEPENDENCY), code
        assert ("check" in vars(rule)) == (entry.kind is Kind.PYTHON), code


def test_fixable_means_a_fix_planner_beside_the_rules_that_the_rule_declares():
    for code, entry in REGISTRY.items():
        if entry.kind is Kind.ENGINE:
            continue
        autofix = rule_class(code).autofix
        assert (autofix is not None) == entry.fixable, code
        if autofix is not None:
            assert autofix.planner.__module__ == entry.fix_module, code
            assert autofix.title, code
    assert tuple(c for c, e in REGISTRY.items() if e.fixable) == codes.FIXABLE_CODES


def test_version_gated_is_read_from_the_class_line_as_declared():
    """``codes.is_version_gated`` reads the rule's file; it must say what the class declares."""
    gated = {rule.code for rule in PYTHON_RULES if rule.min_tinker_version is not None}
    assert {code for code in REGISTRY if codes.is_version_gated(code)} == gated
    assert gated == {"TNK105", "TNK106"}


def test_sees_helpers_is_read_from_the_class_line_as_declared():
    """``codes.sees_helpers`` reads the rule's file (the runner's gate asks it without importing
    the rules); it must say what the class declares."""
    seeing = {rule.code for rule in PYTHON_RULES if rule.sees_helpers}
    assert {code for code in REGISTRY if codes.sees_helpers(code)} == seeing
    assert seeing == {"TNK101", "TNK102", "TNK103", "TNK104"}


def test_the_rules_package_is_built_from_the_registry():
    assert [r.code for r in PYTHON_RULES] == list(codes.PYTHON_CODES)
    assert [r.code for r in DEPENDENCY_RULES] == list(codes.DEPENDENCY_CODES)
    assert list(DOCUMENTED_RULES) == list(codes.RULE_CODES)
    assert (*codes.ENGINE_CODES, *codes.RULE_CODES) == codes.ALL_CODES
    assert tuple(sorted(codes.ALL_CODES)) == codes.ALL_CODES
    by_family = [c for family, _ in codes.FAMILIES.values() for c in codes.codes_of_family(family)]
    assert sorted(by_family) == list(codes.ALL_CODES)


def test_selectors():
    assert codes.is_known_selector("ALL")
    assert codes.is_known_selector("TNK")
    assert codes.is_known_selector("TNK2")
    assert codes.is_known_selector("TNK303")
    assert codes.is_known_selector("TNK4")
    assert not codes.is_known_selector("TNK5")
    assert not codes.is_known_selector("TNK1011")
    assert codes.name_of("TNK001") == "syntax-error"
    assert codes.name_of("TNK999") == ""


def test_the_registry_imports_only_the_standard_library():
    script = (
        "import sys\nbefore = set(sys.modules)\nimport tinker_lint.codes\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('tinker_lint') "
        "or m in ('libcst', 'packaging')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=_env(), capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "['tinker_lint', 'tinker_lint.codes']"


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name in (
        "tnk1xx/tnk101_bad.py",
        "tnk1xx/tnk105_bad.py",
        "tnk2xx/tnk201_tokenizer_in_hot_loop.py",
    ):
        shutil.copy(FIXTURES / name, root)
    (root / "requirements.txt").write_text("pydantic>=2.13.0b1\n")
    return root


@pytest.mark.parametrize(
    ("where", "extra"),
    [
        ("cli", ["--select", "TNK1,TNK3", "--ignore", "TNK105"]),
        ("config", []),
        ("cli", ["--select", "TNK", "--statistics"]),
        ("cli", ["--select", "TNK101", "--output-format", "json"]),
    ],
)
@pytest.mark.slow
def test_a_cached_run_with_select_imports_neither_libcst_nor_the_rules(
    project: Path, tmp_path: Path, where: str, extra: list[str]
):
    """Validating ``select`` codes used to import every rule (and libcst): a run answered from the
    cache took 0.7-1.0 s instead of 0.25 s."""
    if where == "config":
        (project / "pyproject.toml").write_text(
            '[tool.tinker-lint]\nselect = ["TNK1", "TNK3"]\nignore = ["TNK105"]\n'
            'per-file-ignores = { "tnk201_tokenizer_in_hot_loop.py" = ["TNK2"] }\n'
        )
    argv = ["--cache-dir", str(tmp_path / "cache"), *extra, str(project)]
    script = (
        "import sys\nfrom tinker_lint.cli import main\n"
        f"code = main({argv!r})\n"
        "loaded = [m for m in ('libcst', 'tinker_lint.rules', 'tinker_lint.docs') "
        "if m in sys.modules]\n"
        "print(loaded, code, file=sys.stderr)\n"
    )

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script],
            env=_env(),
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stderr.strip().splitlines()[-1]

    assert run() == "['libcst', 'tinker_lint.rules'] 1"  # filling the cache
    assert run() == "[] 1"
