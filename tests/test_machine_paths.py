"""No test, CI step, bench default or linter code names a folder that only one machine has: CI runs
on a clean clone on a fresh machine, where a corpus unpacked under the workplace's or the temporary
folder does not exist, and a test that reads one fails there (or, worse, passes only where it was
written). A corpus is downloaded (``bench/corpora.py``, the ``cookbook`` fixture) or given as an
argument.

This file is scanned too: its examples are assembled (``_folder``), so it holds no such literal."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Folders that are one machine's or one user's: a workplace, scratch and home folders.
MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:work|tmp|root|home|Users|mnt|scratch|data|var/tmp)/\S*")


def _folder(*parts: str) -> str:
    """An absolute folder, written without an absolute literal."""
    return "/" + "/".join(parts)


# Literals that look like such a path but are never read, each with why.
NOT_READ = {
    # Paths a training run recorded in its logs, as data; the test links them to relative ones.
    "tests/test_trace_link.py": _folder("home", "u", "proj") + "/",
}


def _python_files() -> list[Path]:
    files = [*ROOT.joinpath("tinker_lint").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.py")]
    files += ROOT.joinpath("bench").glob("*.py")
    return sorted(files)


def _string_literals(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of each string literal (f-strings included) in a Python file."""
    text = path.read_text(encoding="utf-8")
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [(token.start[0], token.string) for token in tokens if token.type == tokenize.STRING]


def machine_paths(path: Path) -> list[str]:
    relative = path.relative_to(ROOT).as_posix()
    allowed = NOT_READ.get(relative)
    if path.suffix == ".py":
        places = _string_literals(path)
    else:
        places = list(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))
    found = []
    for line, text in places:
        for match in MACHINE_PATH.finditer(text):
            if allowed is None or not match.group().startswith(allowed):
                found.append(f"{relative}:{line}: {match.group()}")
    return found


def test_no_code_test_or_ci_step_names_a_machine_folder() -> None:
    ci = sorted(p for p in ROOT.joinpath(".ci").rglob("*") if p.is_file())
    found = [hit for path in [*_python_files(), *ci] for hit in machine_paths(path)]
    assert found == []


@pytest.mark.parametrize(
    ("literal", "flagged"),
    [
        (f'COOKBOOK = Path("{_folder("work", "corpora", "tinker_cookbook-0.6.1")}")', True),
        (f'SDK = "{_folder("tmp", "sdk", "tinker", "tinker")}"', True),
        (f'HOME = "{_folder("home", "me", "corpus")}"', True),
        (f'url = "https://example.com{_folder("work", "x")}"', False),  # an address's part
        (f'rel = "docs{_folder("tmp", "x.md")}"', False),  # relative
        (f'"{_folder("home", "u", "proj", "train.py")}"', False),  # allowed here, by NOT_READ
    ],
)
def test_the_guard_flags_machine_folders_in_literals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, literal: str, flagged: bool
) -> None:
    module = tmp_path / "tests" / "test_trace_link.py"
    module.parent.mkdir()
    module.write_text(literal + "\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert bool(machine_paths(module)) is flagged
