"""bench/heldout.toml, the held-out set: projects no rule was tuned on. It must stay disjoint from
the tuning set (bench/ecosystem.toml) and free of the cookbook, and `materialise --pins` must copy
it (no linting, no network: a throwaway git repository stands in for a mirror)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.bench_scripts import load

ROOT = Path(__file__).parent.parent
eco = load("ecosystem")

HELDOUT = ROOT / "bench" / "heldout.toml"


def test_the_held_out_set_is_disjoint_from_the_tuning_set():
    tuned = {p.repo.lower() for p in eco.load_projects()}
    held = eco.load_projects(HELDOUT)
    assert len(held) >= 15
    assert [p.repo for p in held if p.repo.lower() in tuned] == []
    assert [p.repo for p in held if "tinker-cookbook" in p.repo.lower()] == []
    # A cookbook copy vendored inside a project is not held-out code either.
    files = [f for p in held for f in p.dense + p.helpers]
    assert [f for f in files if "tinker_cookbook/" in f] == []
    assert all(len(p.commit) == 40 and p.dense and not p.speed for p in held)


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_materialise_copies_the_projects_of_the_pins_file_it_is_given(tmp_path: Path):
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "train.py").write_text("import tinker\n", encoding="utf-8")
    (work / "pkg" / "util.py").write_text("X = 1\n", encoding="utf-8")
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "pinned")
    commit = _git(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    (mirrors / "someone+project").mkdir(parents=True)
    (work / ".git").rename(mirrors / "someone+project" / "repo")
    pins = tmp_path / "pins.toml"
    pins.write_text(
        f'[[project]]\nrepo = "someone/project"\ncommit = "{commit}"\n'
        'dense = ["train.py"]\nhelpers = ["pkg/util.py"]\nspeed = false\n',
        encoding="utf-8",
    )
    dest = tmp_path / "corpus"
    eco.materialise(dest, mirrors, dense_only=False, force=False, pins=pins)
    copied = sorted(str(p.relative_to(dest)) for p in dest.rglob("*.py"))
    assert copied == ["someone+project/pkg/util.py", "someone+project/train.py"]
    assert (dest / "someone+project" / "train.py").read_text(encoding="utf-8") == "import tinker\n"
