"""The TNK4xx measuring instrument: hand-labelled host syncs in public PyTorch training code.

    python3 bench/torch_score.py materialise DEST [--mirrors DIR] [--force]
    python3 bench/torch_score.py score [--corpus DIR] [--ref REF | --tree DIR] [--select TNK4]
                                       [--baseline] [--verbose]

`materialise` puts the files of bench/torch-labels.toml's `[[project]]` tables into
DEST/<dir>/: a PyPI project by `pip download --no-deps NAME==VERSION` and unzipping its wheel, a
GitHub project by `git show COMMIT:PATH` from its mirror (DIR/OWNER+NAME/repo, given
with --mirrors; `fetch github:OWNER/NAME` makes it).

`score` lints the labelled files of each project (`python3 -m tinker_lint --select TNK4
--output-format json --no-cache FILE...`, run in the project's directory, PYTHONPATH set to the
working tree or to `--ref` checked out in a temporary worktree) and judges every finding of the
selected codes in a labelled file against the `[[sync]]` labels:

- recall of the `high` labels (a per-step sync whose value only reaches logging), and of
  `high` + `medium` (NaN guards, early stops, timing), per expected rule;
- findings on `required`, `cpu`, `cadence`, `eval` or `amortized` labels: false;
- findings on no label: false.

A revision with no TNK4xx rule yet (tinker-lint refuses the selection) scores zero findings.
Installs nothing but the pinned wheels (materialise) and never imports or runs the corpus code.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # lintrun.py, beside this script

import lintrun  # noqa: E402
from corpora import CORPORA, extract_wheel  # noqa: E402
from lintrun import CHECKOUT, Finding, worktree  # noqa: E402

LABELS = HERE / "torch-labels.toml"
DEFAULT_CORPUS = CORPORA / "torchcorpus"

# Counted for recall: `high` alone, and `high` + `medium` (the spec's two figures, §11).
COUNTED = ("high", "medium")
# A finding on one of these is false (the spec's traps 3-5 and the cadence/eval model).
FALSE_WHEN_FLAGGED = ("required", "cpu", "cadence", "eval", "amortized")
KINDS = COUNTED + FALSE_WHEN_FLAGGED
RULES = ("TNK401", "TNK402", "TNK403", "TNK404", "TNK405", "TNK406", "TNK407", "TNK408")


@dataclass(frozen=True)
class Project:
    dir: str  # directory under the corpus
    source: str  # "pypi" or "github"
    name: str  # PyPI name or GitHub owner/name
    version: str  # PyPI version or git commit
    files: tuple[str, ...]  # the labelled files, paths inside the project directory

    def show(self) -> str:
        return f"{self.code} {self.path}:{self.line}:{self.column} {self.message}"


@dataclass(frozen=True)
class SyncLabel:
    project: str
    path: str
    line: int  # the sync
    span: tuple[int, int]  # lines a finding about it may sit on
    kind: str
    rule: str  # the rule that should report it (high, medium) or that a naive rule would use
    text: str  # a fragment of the line, checked against the corpus before scoring
    why: str
    # For a sync inside a helper: the lines of its calls in the loop, where a finding may be
    # reported instead (one finding there counts for every label of the helper it calls).
    call_sites: tuple[int, ...] = ()

    def where(self) -> str:
        return f"{self.project}/{self.path}:{self.line}"

    def distance(self, line: int) -> int | None:
        if self.span[0] <= line <= self.span[1]:
            return abs(line - self.line)
        return None


def load(path: Path = LABELS) -> tuple[list[Project], list[SyncLabel]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    projects = [
        Project(
            dir=raw["dir"],
            source=raw["source"],
            name=raw["name"],
            version=raw["version"],
            files=tuple(raw["files"]),
        )
        for raw in data.get("project", [])
    ]
    files = {(p.dir, f) for p in projects for f in p.files}
    labels = []
    for raw in data.get("sync", []):
        line = int(raw["line"])
        first, last = raw.get("span", [line, line])
        label = SyncLabel(
            project=raw["project"],
            path=raw["path"],
            line=line,
            span=(min(first, line), max(last, line)),
            kind=raw["kind"],
            rule=raw.get("rule", "TNK401"),
            text=raw["text"],
            why=raw["why"],
            call_sites=tuple(int(x) for x in raw.get("call_sites", [])),
        )
        if label.kind not in KINDS:
            raise SystemExit(f"{path}: {label.where()}: kind {label.kind!r} is not one of {KINDS}")
        if label.rule not in RULES:
            raise SystemExit(f"{path}: {label.where()}: rule {label.rule!r} is not a TNK4xx code")
        if (label.project, label.path) not in files:
            raise SystemExit(f"{path}: {label.where()}: the file is in no [[project]]'s files")
        labels.append(label)
    places = [(x.project, x.path, x.line) for x in labels]
    if len(set(places)) != len(places):
        raise SystemExit(f"{path}: a [[sync]] label is listed twice")
    return projects, labels


def check_texts(labels: list[SyncLabel], corpus: Path) -> list[str]:
    """The labels whose line in the corpus does not hold their `text` (another version)."""
    return lintrun.stale_labels(
        (x.where(), corpus / x.project / x.path, x.line, x.text) for x in labels
    )


# --- materialise -------------------------------------------------------------------------------


def materialise(dest: Path, mirrors: Path, force: bool, path: Path = LABELS) -> None:
    projects, _ = load(path)
    for project in projects:
        target = dest / project.dir
        if target.exists() and any(target.iterdir()) and not force:
            print(f"{target}: exists, kept (--force rewrites it)")
            continue
        target.mkdir(parents=True, exist_ok=True)
        if project.source == "pypi":
            extract_wheel(f"{project.name}=={project.version}", target)
        else:
            git_dir = mirrors / project.name.replace("/", "+") / "repo"
            for file in project.files:
                done = subprocess.run(
                    ["git", "--git-dir", str(git_dir), "show", f"{project.version}:{file}"],
                    capture_output=True,
                    check=True,
                )
                out = target / file
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(done.stdout)
        print(f"{target}: {project.name} {project.version}")


# --- score -------------------------------------------------------------------------------------


def lint(
    tree: Path, project_dir: Path, files: tuple[str, ...], select: str
) -> tuple[list[Finding], str]:
    """tinker-lint of `tree` over some files of one project: findings, and an error or a note."""
    findings, error = lintrun.lint(tree, project_dir, ["--select", select, *files])
    if "unknown rule code or prefix" in error:
        return [], "no such rule at this revision (scored as zero findings)"
    if findings is None or error:
        return [], f"failed: {error}"
    return findings, ""


# --- the context-free baseline ------------------------------------------------------------------

# The explicit host-sync methods a context-free rule looks for (the spec's §11 baseline: "`.item()`
# inside any loop"), and the two other explicit calls the labels list.
SYNC_METHODS = ("item", "tolist", "cpu", "numpy")
BASELINE_CODES = {"synchronize": "TNK401", "empty_cache": "TNK406", "compile": "TNK408"}


def naive_findings(source: str, path: str) -> list[Finding]:
    """Every explicit sync call lexically inside a `for`/`while` of the same function, with no
    notion of step, cadence, eval, device or data dependency: what the labels are measured
    against when no TNK4xx rule exists (`score --baseline`)."""
    found: list[Finding] = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                visit(child, False)  # a new scope: its loops are its own
                continue
            if in_loop and isinstance(child, ast.Call):
                name = _called_name(child.func)
                code = "TNK401" if name in SYNC_METHODS else BASELINE_CODES.get(name or "")
                if code is not None:
                    found.append(
                        Finding(path, child.lineno, child.col_offset + 1, code, f"naive: {name}()")
                    )
            visit(child, in_loop or isinstance(child, (ast.For, ast.AsyncFor, ast.While)))

    visit(ast.parse(source), False)
    return sorted(found)


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


@dataclass
class Match:
    on_label: dict[SyncLabel, list[Finding]]  # nearest label wins (ties: the earlier line)
    unmatched: list[tuple[str, Finding]]  # (project, finding) about no label: false


def match(labels: list[SyncLabel], findings: dict[str, list[Finding]], prefix: str) -> Match:
    """Judge every finding whose code starts with `prefix` and that sits in a labelled file."""
    by_file: dict[tuple[str, str], list[SyncLabel]] = {}
    for label in labels:
        by_file.setdefault((label.project, label.path), []).append(label)
    on_label: dict[SyncLabel, list[Finding]] = {}
    unmatched: list[tuple[str, Finding]] = []
    for project in sorted(findings):
        for finding in sorted(findings[project]):
            if not finding.code.startswith(prefix):
                continue
            file_labels = by_file.get((project, finding.path), [])
            candidates = [
                (d, label.line, label)
                for label in file_labels
                if (d := label.distance(finding.line)) is not None
            ]
            if not candidates:
                called = [x for x in file_labels if finding.line in x.call_sites]
                for label in called:
                    on_label.setdefault(label, []).append(finding)
                if not called:
                    unmatched.append((project, finding))
                continue
            label = min(candidates, key=lambda c: (c[0], c[1]))[2]
            on_label.setdefault(label, []).append(finding)
    return Match(on_label=on_label, unmatched=unmatched)


def table(labels: list[SyncLabel], m: Match) -> list[str]:
    """Per expected rule: high labelled/found, high+medium labelled/found, false findings."""
    rules = sorted({x.rule for x in labels} | {f.code for fs in m.on_label.values() for f in fs})
    rules += sorted({f.code for _, f in m.unmatched} - set(rules))
    head = f"{'rule':<8} {'high':>5} {'found':>6} {'h+med':>6} {'found':>6} "
    head += " ".join(f"{k:>9}" for k in FALSE_WHEN_FLAGGED) + f" {'nothing':>8}"
    rows = [head]
    totals = [0] * (4 + len(FALSE_WHEN_FLAGGED) + 1)
    for rule in rules:
        mine = [x for x in labels if x.rule == rule]
        high = [x for x in mine if x.kind == "high"]
        counted = [x for x in mine if x.kind in COUNTED]
        # A false finding is charged to the code it carries, not to the label's expected rule.
        false_on = [
            sum(1 for x, fs in m.on_label.items() if x.kind == kind for f in fs if f.code == rule)
            for kind in FALSE_WHEN_FLAGGED
        ]
        nothing = sum(1 for _, f in m.unmatched if f.code == rule)
        cells = [
            len(high),
            sum(1 for x in high if m.on_label.get(x)),
            len(counted),
            sum(1 for x in counted if m.on_label.get(x)),
            *false_on,
            nothing,
        ]
        totals = [a + b for a, b in zip(totals, cells, strict=True)]
        rows.append(_row(rule, cells))
    rows.append(_row("total", totals))
    return rows


def _row(name: str, cells: list[int]) -> str:
    text = f"{name:<8} {cells[0]:>5} {cells[1]:>6} {cells[2]:>6} {cells[3]:>6} "
    text += " ".join(f"{c:>9}" for c in cells[4:-1]) + f" {cells[-1]:>8}"
    return text


def report(labels: list[SyncLabel], m: Match, verbose: bool) -> list[str]:
    lines = table(labels, m)
    high = [x for x in labels if x.kind == "high"]
    found = sum(1 for x in high if m.on_label.get(x))
    false = sum(len(fs) for x, fs in m.on_label.items() if x.kind in FALSE_WHEN_FLAGGED)
    false += len(m.unmatched)
    lines.append(f"high found {found} of {len(high)}; false findings {false}")
    for x in labels:
        fs = m.on_label.get(x, [])
        if x.kind in FALSE_WHEN_FLAGGED and fs:
            lines += [f"FALSE ({x.kind}) {x.where()}: {f.show()}  -- {x.why}" for f in fs]
        elif verbose and x.kind in COUNTED:
            state = "found" if fs else "MISSED"
            lines.append(f"{state} ({x.kind} {x.rule}) {x.where()}: {x.text}  -- {x.why}")
    lines += [f"FALSE (no label) {p}: {f.show()}" for p, f in m.unmatched]
    return lines


def score(
    corpus: Path,
    ref: str | None,
    select: str,
    verbose: bool,
    baseline: bool = False,
    path: Path = LABELS,
    tree_dir: Path | None = None,
) -> int:
    projects, labels = load(path)
    missing = [p.dir for p in projects if not (corpus / p.dir).is_dir()]
    if missing:
        raise SystemExit(
            f"{corpus}: not materialised: {', '.join(missing)}\n"
            f"  python3 bench/torch_score.py materialise {corpus}"
        )
    stale = check_texts(labels, corpus)
    if stale:
        raise SystemExit("labels that do not match the corpus:\n  " + "\n  ".join(stale))
    failures = 0
    findings: dict[str, list[Finding]] = {}
    if baseline:
        print("the context-free baseline: every explicit sync call inside any loop")
        for project in projects:
            findings[project.dir] = [
                f
                for file in project.files
                for f in naive_findings(
                    (corpus / project.dir / file).read_text(encoding="utf-8"), file
                )
            ]
        print("\n".join(report(labels, match(labels, findings, select), verbose)))
        return 0
    with contextlib.ExitStack() as stack:
        tree = stack.enter_context(worktree(ref)) if ref else (tree_dir or CHECKOUT)
        print(f"tinker-lint: {ref or 'working tree of ' + str(tree)}; --select {select}")
        for project in projects:
            findings[project.dir], note = lint(tree, corpus / project.dir, project.files, select)
            if note:
                print(f"{project.dir}: {note}")
                failures += note.startswith("failed")
    print("\n".join(report(labels, match(labels, findings, select), verbose)))
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    mat = sub.add_parser("materialise", help="download or copy the labelled projects")
    mat.add_argument("dest", type=Path)
    mat.add_argument(
        "--mirrors",
        type=Path,
        required=True,
        help="the git mirrors, one DIR/OWNER+NAME/repo per repository (`fetch github:OWNER/NAME`)",
    )
    mat.add_argument("--force", action="store_true")
    sco = sub.add_parser("score", help="recall and false findings on the labelled syncs")
    sco.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    sco.add_argument("--ref", help="git revision of tinker-lint (default: the working tree)")
    sco.add_argument(
        "--tree", type=Path, help="lint with the tinker-lint of this checkout (read only)"
    )
    sco.add_argument("--select", default="TNK4", help="codes to lint and judge (a prefix)")
    sco.add_argument("--verbose", action="store_true", help="every counted label, found or not")
    sco.add_argument(
        "--baseline",
        action="store_true",
        help="score a context-free rule (any explicit sync call in any loop) instead of tinker-lint",
    )
    args = parser.parse_args(argv)
    if args.command == "materialise":
        materialise(args.dest, args.mirrors, args.force)
        return 0
    return score(
        args.corpus, args.ref, args.select, args.verbose, args.baseline, tree_dir=args.tree
    )


if __name__ == "__main__":
    sys.exit(main())
