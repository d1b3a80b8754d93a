"""The ecosystem check: lint pinned real projects at two revisions and print what changed.

    python3 bench/ecosystem.py materialise DEST [--dense] [--mirrors DIR]
    python3 bench/ecosystem.py compare --base REF [--head REF] [--corpus DIR] [--project NAME]

`materialise` copies the files pinned in bench/ecosystem.toml out of the git mirrors
(DIR/OWNER+NAME/repo, by default /work/.mirror) into DEST/OWNER+NAME/, each at its path in its
repository, so that a helper imported from another module of the project sits where the import
says. `--dense` copies only the files that call Tinker themselves, of the projects in the speed
corpus (/work/corpora/tinker-dense was made so).

`compare` lints the materialised corpus with tinker-lint at two git revisions of this checkout:
the base in a temporary `git worktree`, the head in this working tree unless `--head` names a
revision (then a second worktree). Each project directory is linted on its own, by
`python3 -m tinker_lint --output-format json --no-cache DIR` with PYTHONPATH set to that
revision's tree, so the project root is the project's own directory. It prints, per project, the
findings the head adds and removes (code, file:line:col, message), then the totals per code, in a
fixed order, to be read by hand (as ruff's ecosystem check before a rule change).

Installs nothing and never imports or runs the corpus code: the files are read by git and by
tinker-lint only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
PINS = HERE / "ecosystem.toml"
DEFAULT_MIRRORS = Path("/work/.mirror")
DEFAULT_CORPUS = Path("/tmp/tinker-ecosystem")


@dataclass(frozen=True)
class Project:
    repo: str
    commit: str
    note: str
    dense: tuple[str, ...]
    helpers: tuple[str, ...]
    speed: bool  # part of the speed corpus (`materialise --dense`)

    @property
    def dirname(self) -> str:
        # The mirrors' spelling: one directory per repository, no nesting by owner.
        return self.repo.replace("/", "+")


def load_projects(path: Path = PINS) -> list[Project]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    projects = [
        Project(
            repo=p["repo"],
            commit=p["commit"],
            note=p.get("note", ""),
            dense=tuple(p.get("dense", ())),
            helpers=tuple(p.get("helpers", ())),
            speed=p.get("speed", True),
        )
        for p in data["project"]
    ]
    names = [p.dirname for p in projects]
    if len(set(names)) != len(names):
        raise SystemExit(f"{path}: a repository is listed twice")
    return projects


def git_show(git_dir: Path, commit: str, path: str) -> bytes:
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{git_dir}: no {path} at {commit[:12]}: {done.stderr.decode().strip()}")
    return done.stdout


def materialise(dest: Path, mirrors: Path, dense_only: bool) -> None:
    projects = [p for p in load_projects() if p.speed or not dense_only]
    files = lines = 0
    for project in projects:
        git_dir = mirrors / project.dirname / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"no mirror at {git_dir}: fetch github:{project.repo} first")
        paths = project.dense if dense_only else project.dense + project.helpers
        for rel in paths:
            target = dest / project.dirname / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            content = git_show(git_dir, project.commit, rel)
            target.write_bytes(content)
            if rel.endswith(".py"):
                files += 1
                lines += content.count(b"\n")
    print(f"{dest}: {len(projects)} projects, {files} Python files, {lines} lines")


# --- compare ----------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Finding:
    path: str  # relative to the project directory
    line: int
    column: int
    code: str
    message: str

    def show(self) -> str:
        return f"{self.code} {self.path}:{self.line}:{self.column} {self.message}"


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """A detached worktree of this checkout at `ref`, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="tinker-lint-eco-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(CHECKOUT), "worktree", "add", "--detach", "--quiet", str(tree), ref],
            check=True,
        )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", str(CHECKOUT), "worktree", "remove", "--force", str(tree)],
                check=False,
            )


def lint(tree: Path, project_dir: Path) -> tuple[list[Finding], str]:
    """tinker-lint of `tree` over one project directory: its findings and any error text."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tinker_lint",
            "--output-format",
            "json",
            "--no-cache",
            str(project_dir),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=project_dir,
        check=False,
    )
    # Exit status 1 means "findings"; anything else, or no JSON, is a failure worth showing.
    try:
        records = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        return [], f"exit {done.returncode}: {done.stderr.strip() or done.stdout[:500]}"
    error = "" if done.returncode in (0, 1) else f"exit {done.returncode}: {done.stderr.strip()}"
    return [to_finding(r, project_dir) for r in records], error


def to_finding(record: dict[str, object], project_dir: Path) -> Finding:
    raw = str(record.get("filename") or record.get("path") or "")
    path = Path(raw)
    if path.is_absolute():
        with contextlib.suppress(ValueError):
            path = path.relative_to(project_dir)
    location = record.get("location")
    if isinstance(location, dict):
        line, column = location.get("row", 0), location.get("column", 0)
    else:
        line, column = record.get("line", 0), record.get("column", 0)
    return Finding(
        path=path.as_posix(),
        line=int(str(line)),
        column=int(str(column)),
        code=str(record.get("code", "")),
        message=str(record.get("message", "")),
    )


def describe(tree: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def compare(base: str, head: str | None, corpus: Path, only: str | None) -> int:
    projects = [p for p in load_projects() if only in (None, p.repo, p.dirname)]
    missing = [p.dirname for p in projects if not (corpus / p.dirname).is_dir()]
    if missing:
        raise SystemExit(
            f"{corpus}: not materialised: {', '.join(missing)}\n"
            f"  python3 bench/ecosystem.py materialise {corpus}"
        )
    with contextlib.ExitStack() as stack:
        base_tree = stack.enter_context(worktree(base))
        head_tree = stack.enter_context(worktree(head)) if head else CHECKOUT
        print(f"base: {describe(base_tree)}")
        print(f"head: {describe(head_tree) if head else 'working tree of ' + str(CHECKOUT)}")
        print()
        added_per_code: Counter[str] = Counter()
        removed_per_code: Counter[str] = Counter()
        base_per_code: Counter[str] = Counter()
        head_per_code: Counter[str] = Counter()
        failures = 0
        for project in projects:
            project_dir = corpus / project.dirname
            before, base_error = lint(base_tree, project_dir)
            after, head_error = lint(head_tree, project_dir)
            base_per_code.update(f.code for f in before)
            head_per_code.update(f.code for f in after)
            added = sorted(set(after) - set(before))
            removed = sorted(set(before) - set(after))
            added_per_code.update(f.code for f in added)
            removed_per_code.update(f.code for f in removed)
            for label, error in (("base", base_error), ("head", head_error)):
                if error:
                    failures += 1
                    print(f"{project.repo}: {label} failed: {error}")
            if not (added or removed):
                continue
            print(f"{project.repo} @ {project.commit[:12]}: +{len(added)} -{len(removed)}")
            for f in added:
                print(f"  + {f.show()}")
            for f in removed:
                print(f"  - {f.show()}")
            print()
        print("totals per code (base -> head, +added -removed):")
        codes = sorted(set(base_per_code) | set(head_per_code))
        for code in codes:
            print(
                f"  {code}: {base_per_code[code]} -> {head_per_code[code]}"
                f"  (+{added_per_code[code]} -{removed_per_code[code]})"
            )
        if not codes:
            print("  no findings at either revision")
        return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    mat = sub.add_parser("materialise", help="copy the pinned files out of the mirrors")
    mat.add_argument("dest", type=Path)
    mat.add_argument("--dense", action="store_true", help="only the files that call Tinker")
    mat.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    cmp_ = sub.add_parser("compare", help="lint the corpus at two revisions, print the changes")
    cmp_.add_argument("--base", required=True, help="git revision of tinker-lint to compare from")
    cmp_.add_argument("--head", help="git revision to compare to (default: the working tree)")
    cmp_.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    cmp_.add_argument("--project", help="only this project (owner/name)")
    args = parser.parse_args(argv)
    if args.command == "materialise":
        materialise(args.dest, args.mirrors, args.dense)
        return 0
    return compare(args.base, args.head, args.corpus, args.project)


if __name__ == "__main__":
    sys.exit(main())
