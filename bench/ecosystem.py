"""The ecosystem check: lint pinned real projects at two revisions and print what changed.

    python3 bench/ecosystem.py materialise DEST [--dense] [--mirrors DIR] [--force] [--pins FILE]
    python3 bench/ecosystem.py compare --base REF [--head REF] [--corpus DIR] [--project NAME]
                                       [--pins FILE]
    python3 bench/ecosystem.py score [--ref REF] [--corpus DIR] [--codes TNK101,...] [--verbose]
                                     [--labels FILE]

`materialise` copies the files pinned in bench/ecosystem.toml out of the git mirrors
(DIR/OWNER+NAME/repo, given with --mirrors) into DEST/OWNER+NAME/, each at its path in its
repository, so that a helper imported from another module of the project sits where the import
says. `--dense` copies only the files that call Tinker themselves, of the projects in the speed
corpus (the speed corpus `tinker-dense` was made so). `--pins bench/heldout.toml` copies the held-out
set instead: other projects, never tuned on, to measure the rules on code they were not fitted to.

`compare` lints the materialised corpus with tinker-lint at two git revisions of this checkout:
the base in a temporary `git worktree`, the head in this working tree unless `--head` names a
revision (then a second worktree). Each project directory is linted on its own, by
`python3 -m tinker_lint --output-format json --no-cache DIR` with PYTHONPATH set to that
revision's tree, so the project root is the project's own directory. It prints, per project, the
findings the head adds and removes (code, file:line:col, message), then the totals per code, in a
fixed order, to be read by hand (as ruff's ecosystem check before a rule change).

`score` lints the files labelled by hand in bench/ecosystem-labels.toml (at the working tree, or
at `--ref`) and prints recall on the serial waits and the false findings (on required waits, on
harmless blocking, on nothing), per rule. `--labels bench/fresh-labels.toml` scores another
labelled set instead (materialised from its pins file, bench/fresh.toml, into `--corpus`). TNK2xx codes (`--codes TNK201,...,TNK205`, or
`--codes cpu` for all five) are scored on the `[[cpu]]` labels instead: recall on the real
problems, and the findings on cheap or required calls or on nothing, per rule.

Installs nothing and never imports or runs the corpus code: the files are read by git and by
tinker-lint only.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # lintrun.py, beside this script

import lintrun  # noqa: E402
from corpora import CORPORA  # noqa: E402
from lintrun import CHECKOUT, Finding, worktree  # noqa: E402

PINS = HERE / "ecosystem.toml"
LABELS = HERE / "ecosystem-labels.toml"
PIPELINE_CODES = ("TNK101", "TNK102", "TNK103", "TNK104")
CPU_CODES = ("TNK201", "TNK202", "TNK203", "TNK204", "TNK205")
DEFAULT_CORPUS = CORPORA / "tinker-ecosystem"


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


def materialise(
    dest: Path, mirrors: Path, dense_only: bool, force: bool, pins: Path = PINS
) -> None:
    # A file left from an older pin would be linted as if it were pinned: start from nothing.
    if dest.exists() and any(dest.iterdir()) and not force:
        raise SystemExit(f"{dest} is not empty: give a new directory (or --force to write over it)")
    projects = [p for p in load_projects(pins) if p.speed or not dense_only]
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


def lint(tree: Path, project_dir: Path) -> tuple[list[Finding], str]:
    """tinker-lint of `tree` over one project directory: its findings and any error text."""
    findings, error = lintrun.lint(tree, project_dir, [str(project_dir)])
    return findings or [], error


def describe(tree: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def compare(base: str, head: str | None, corpus: Path, only: str | None, pins: Path = PINS) -> int:
    projects = [p for p in load_projects(pins) if only in (None, p.repo, p.dirname)]
    missing = [p.dirname for p in projects if not (corpus / p.dirname).is_dir()]
    if missing:
        raise SystemExit(
            f"{corpus}: not materialised: {', '.join(missing)}\n"
            f"  python3 bench/ecosystem.py materialise {corpus}"
            + (f" --pins {pins}" if pins != PINS else "")
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


# --- score ------------------------------------------------------------------------------------

COUNTED = ("serial", "blocking")  # the kinds recall is measured on
FALSE_WHEN_FLAGGED = ("required", "harmless")


@dataclass(frozen=True)
class Label:
    repo: str
    path: str
    wait: int
    span: tuple[int, int]
    call_site: int | None
    kind: str
    rule: str
    why: str

    def distance(self, line: int) -> int | None:
        """How far a finding on `line` is from this wait, or None if it is not about it."""
        if line == self.wait or line == self.call_site:
            return 0
        if self.span[0] <= line <= self.span[1]:
            return abs(line - self.wait)
        return None


def load_labels(path: Path = LABELS) -> list[Label]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    labels = []
    for raw in data["label"]:
        wait = int(raw["wait"])
        first, last = raw.get("span", [wait, wait])
        labels.append(
            Label(
                repo=raw["repo"],
                path=raw["path"],
                wait=wait,
                span=(min(first, wait), max(last, wait)),
                call_site=raw.get("call_site"),
                kind=raw["kind"],
                rule=raw.get("rule", ""),
                why=raw.get("why", ""),
            )
        )
    return labels


# The TNK2xx family (hot-loop CPU work) is labelled per call, in `[[cpu]]` tables of the same
# file: `cpu` a real problem (heavy and avoidable: counted for recall); `cheap` and `required` a
# call a finding about is false (too small to matter, or work that cannot move: this step's result,
# a datum's own constructor, a rollout's text); `debatable` not counted either way.
CPU_KINDS = ("cpu", "cheap", "required", "debatable")
CPU_COUNTED = ("cpu",)
CPU_FALSE_WHEN_FLAGGED = ("cheap", "required")


def is_cpu_code(code: str) -> bool:
    return code.startswith("TNK2")


@dataclass(frozen=True)
class CpuLabel:
    repo: str
    path: str
    line: int  # the call
    span: tuple[int, int]  # lines a finding about it may sit on (a call over several lines)
    kind: str
    rule: str  # the code expected (for `cpu`), or the code a finding there has today
    text: str  # a fragment of the call's source line, checked against the corpus
    why: str  # the cost shape, in one line

    @property
    def dirname(self) -> str:
        return self.repo.replace("/", "+")

    def where(self) -> str:
        return f"{self.repo}/{self.path}:{self.line}"

    def distance(self, line: int) -> int | None:
        """How far a finding on `line` is from this call, or None if it is not about it."""
        if self.span[0] <= line <= self.span[1]:
            return abs(line - self.line)
        return None


def load_cpu_labels(path: Path = LABELS) -> list[CpuLabel]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    labels = []
    for raw in data.get("cpu", []):
        line = int(raw["line"])
        first, last = raw.get("span", [line, line])
        label = CpuLabel(
            repo=raw["repo"],
            path=raw["path"],
            line=line,
            span=(min(first, line), max(last, line)),
            kind=raw["kind"],
            rule=raw.get("rule", ""),
            text=raw.get("text", ""),
            why=raw.get("why", ""),
        )
        if label.kind not in CPU_KINDS:
            raise SystemExit(
                f"{path}: {label.where()}: kind {label.kind!r} is not one of {CPU_KINDS}"
            )
        if label.kind in CPU_COUNTED and not is_cpu_code(label.rule):
            raise SystemExit(
                f"{path}: {label.where()}: a `cpu` label names the TNK2xx rule expected"
            )
        labels.append(label)
    places = [(label.repo, label.path, label.line) for label in labels]
    if len(set(places)) != len(places):
        raise SystemExit(f"{path}: a [[cpu]] label is listed twice")
    return labels


def check_cpu_texts(labels: list[CpuLabel], corpus: Path) -> list[str]:
    """The labels whose line in the materialised corpus does not hold their `text`."""
    return lintrun.stale_labels(
        (x.where(), corpus / x.dirname / x.path, x.line, x.text) for x in labels
    )


@dataclass
class CpuMatch:
    """The TNK2xx findings of the labelled files, each judged against the labels."""

    on_label: dict[CpuLabel, list[Finding]]  # every finding about a label, nearest label wins
    unmatched: list[tuple[str, Finding]]  # (project directory, finding) about no label: false
    # In a labelled project but a file without TNK2xx labels: not judged, shown so that a rule
    # change that starts flagging such a file is seen (and the file read and labelled).
    unjudged: list[tuple[str, Finding]]

    def true_findings(self) -> list[Finding]:
        return [f for label, fs in self.on_label.items() if label.kind in CPU_COUNTED for f in fs]

    def false_findings(self) -> list[tuple[str, Finding, CpuLabel | None]]:
        """Findings on a cheap or required call, or on nothing, with the label if any."""
        false: list[tuple[str, Finding, CpuLabel | None]] = [
            (label.dirname, f, label)
            for label, fs in self.on_label.items()
            if label.kind in CPU_FALSE_WHEN_FLAGGED
            for f in fs
        ]
        false.extend((name, f, None) for name, f in self.unmatched)
        return sorted(false, key=lambda item: (item[0], item[1]))

    def debatable_findings(self) -> list[Finding]:
        return [f for label, fs in self.on_label.items() if label.kind == "debatable" for f in fs]


def match_cpu(
    labels: list[CpuLabel], findings_by_project: dict[str, list[Finding]], codes: tuple[str, ...]
) -> CpuMatch:
    """Judge every finding of `codes` in a file that has TNK2xx labels: the nearest label about
    its line (ties: the earlier line), or none (false)."""
    on_label: dict[CpuLabel, list[Finding]] = {}
    unmatched: list[tuple[str, Finding]] = []
    unjudged: list[tuple[str, Finding]] = []
    by_file: dict[tuple[str, str], list[CpuLabel]] = {}
    for label in labels:
        by_file.setdefault((label.dirname, label.path), []).append(label)
    for name in sorted({label.dirname for label in labels}):
        for finding in sorted(findings_by_project.get(name, [])):
            if finding.code not in codes:
                continue
            file_labels = by_file.get((name, finding.path))
            if file_labels is None:
                unjudged.append((name, finding))
                continue
            candidates = [
                (distance, label.line, label)
                for label in file_labels
                if (distance := label.distance(finding.line)) is not None
            ]
            if not candidates:
                unmatched.append((name, finding))
                continue
            label = min(candidates, key=lambda c: (c[0], c[1]))[2]
            on_label.setdefault(label, []).append(finding)
    return CpuMatch(on_label=on_label, unmatched=unmatched, unjudged=unjudged)


def cpu_table(labels: list[CpuLabel], match: CpuMatch, codes: tuple[str, ...]) -> list[str]:
    """Per rule: real problems labelled and found, findings true, false and debatable."""
    rows = ["| rule | real labelled | found | true findings | false findings | on debatable |"]
    rows.append("|---|---:|---:|---:|---:|---:|")
    false = Counter(f.code for _, f, _ in match.false_findings())
    true = Counter(f.code for f in match.true_findings())
    debatable = Counter(f.code for f in match.debatable_findings())
    counted = [label for label in labels if label.kind in CPU_COUNTED]
    totals = [0, 0, 0, 0, 0]
    for code in codes:
        of_rule = [label for label in counted if label.rule == code]
        got = [label for label in of_rule if label in match.on_label]
        row = [len(of_rule), len(got), true[code], false[code], debatable[code]]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        rows.append(f"| {code} | " + " | ".join(str(n) for n in row) + " |")
    rows.append("| **total** | " + " | ".join(f"**{n}**" for n in totals) + " |")
    return rows


def report_cpu(
    labels: list[CpuLabel],
    findings_by_project: dict[str, list[Finding]],
    codes: tuple[str, ...],
    verbose: bool,
) -> None:
    match = match_cpu(labels, findings_by_project, codes)
    print()
    print("TNK2xx labels (real: found or missed; cheap, required: a finding is false):")
    for label in labels:
        fs = match.on_label.get(label, [])
        if fs:
            state = ", ".join(f"{f.code}@{f.line}" for f in fs)
        else:
            state = "missed" if label.kind in CPU_COUNTED else "-"
        if verbose or label.kind in CPU_COUNTED or fs:
            print(f"  [{label.kind}] {label.where()} {label.rule}: {state}")
            if verbose:
                print(f"      {label.why}")
    counted = [label for label in labels if label.kind in CPU_COUNTED]
    hits = [label for label in counted if label in match.on_label]
    print()
    print(f"recall (real problems found / labelled): {len(hits)}/{len(counted)}")
    for code in codes:
        of_rule = [label for label in counted if label.rule == code]
        if of_rule:
            got = [label for label in of_rule if label in match.on_label]
            same = [label for label in got if any(f.code == code for f in match.on_label[label])]
            print(f"  {code}: {len(got)}/{len(of_rule)} (by {code} itself: {len(same)})")
    print()
    print("false findings (on a cheap or required call, or on nothing):")
    false = match.false_findings()
    for name, finding, on in false:
        # The messages are long and alike: with --verbose only.
        shown = (
            finding.show()
            if verbose
            else f"{finding.code} {finding.path}:{finding.line}:{finding.column}"
        )
        if on is None:
            print(f"  on nothing: {name}/{shown}")
        else:
            print(f"  on a {on.kind} call: {shown}  [{on.where()}]")
    if not false:
        print("  none")
    debatable = match.debatable_findings()
    if debatable:
        print()
        print("findings on debatable calls (not counted):")
        for label, fs in match.on_label.items():
            if label.kind == "debatable":
                for finding in fs:
                    print(
                        f"  {finding.code} {finding.path}:{finding.line}:{finding.column}  [{label.where()}]"
                    )
    true = match.true_findings()
    print()
    print(f"findings: {len(true)} true, {len(false)} false, {len(debatable)} debatable")
    if match.unjudged:
        # Not counted: these files have no TNK2xx labels yet (read them, then label them).
        print(
            f"not judged (files of labelled projects without [[cpu]] labels): {len(match.unjudged)}"
        )
        for name, finding in match.unjudged if verbose else []:
            print(f"  {name}/{finding.code} {finding.path}:{finding.line}:{finding.column}")
    print()
    print("\n".join(cpu_table(labels, match, codes)))


def lint_labelled(
    tree: Path, corpus: Path, names: list[str]
) -> tuple[dict[str, list[Finding]], int]:
    """Each labelled project linted whole (so that helpers in its other modules count)."""
    findings: dict[str, list[Finding]] = {}
    failures = 0
    for name in names:
        findings[name], error = lint(tree, corpus / name)
        if error:
            failures += 1
            print(f"{name}: tinker-lint failed: {error}")
    return findings, failures


def score(
    ref: str | None,
    corpus: Path,
    codes: tuple[str, ...],
    verbose: bool,
    labels_path: Path = LABELS,
) -> int:
    pipeline_codes = tuple(code for code in codes if not is_cpu_code(code))
    cpu_codes = tuple(code for code in codes if is_cpu_code(code))
    labels = load_labels(labels_path) if pipeline_codes else []
    cpu_labels = load_cpu_labels(labels_path) if cpu_codes else []
    by_project: dict[str, list[Label]] = {}
    for label in labels:
        by_project.setdefault(label.repo.replace("/", "+"), []).append(label)
    cpu_by_project: dict[str, list[CpuLabel]] = {}
    for cpu_label in cpu_labels:
        cpu_by_project.setdefault(cpu_label.dirname, []).append(cpu_label)
    names = sorted(set(by_project) | set(cpu_by_project))
    missing = [name for name in names if not (corpus / name).is_dir()]
    if missing:
        raise SystemExit(
            f"{corpus}: not materialised: {', '.join(missing)}\n"
            f"  python3 bench/ecosystem.py materialise {corpus}"
        )
    # A label whose line no longer holds its call (another pin, an edited copy) would judge the
    # wrong line: refuse to score rather than count it.
    stale = check_cpu_texts(cpu_labels, corpus)
    if stale:
        raise SystemExit("labels that do not match the corpus:\n  " + "\n  ".join(stale))
    with contextlib.ExitStack() as stack:
        tree = stack.enter_context(worktree(ref)) if ref else CHECKOUT
        print(f"tinker-lint: {describe(tree) if ref else 'working tree of ' + str(CHECKOUT)}")
        findings, failures = lint_labelled(tree, corpus, names)
    if pipeline_codes:
        report_pipeline(labels, by_project, findings, pipeline_codes, verbose)
    if cpu_codes:
        report_cpu(cpu_labels, findings, cpu_codes, verbose)
    return 1 if failures else 0


def report_pipeline(
    labels: list[Label],
    by_project: dict[str, list[Label]],
    findings_by_project: dict[str, list[Finding]],
    codes: tuple[str, ...],
    verbose: bool,
) -> None:
    # Each label gets the nearest finding about it; a finding about no label is false.
    found: dict[Label, Finding] = {}
    extra: list[tuple[Label, Finding]] = []  # a second finding about the same wait
    unmatched: list[tuple[str, Finding]] = []
    for name in sorted(by_project):
        project_labels = by_project[name]
        findings = findings_by_project[name]
        files = {label.path for label in project_labels}
        for finding in sorted(f for f in findings if f.code in codes and f.path in files):
            candidates = [
                (distance, label.wait, label)
                for label in project_labels
                if label.path == finding.path
                and (distance := label.distance(finding.line)) is not None
            ]
            if not candidates:
                unmatched.append((name, finding))
                continue
            label = min(candidates, key=lambda c: (c[0], c[1]))[2]
            if label in found:
                extra.append((label, finding))
            else:
                found[label] = finding

    def where(label: Label) -> str:
        return f"{label.repo}/{label.path}:{label.wait}"

    print()
    print("labels (found: the finding; missed; on a required or harmless wait: a false finding):")
    for label in labels:
        finding = found.get(label)
        if finding is None:
            state = "missed" if label.kind in COUNTED else "-"
        else:
            offset = finding.line - label.wait
            at = "at the wait" if offset == 0 else f"{offset:+d} lines"
            state = f"{finding.code} ({at})"
        if verbose or label.kind in COUNTED or finding is not None:
            print(f"  [{label.kind}] {where(label)} {label.rule}: {state}")
            if verbose:
                print(f"      {label.why}")

    counted = [label for label in labels if label.kind in COUNTED]
    hits = [label for label in counted if label in found]
    exact = [label for label in hits if found[label].line in (label.wait, label.call_site)]
    print()
    print(
        f"recall (serial and blocking waits found / labelled): {len(hits)}/{len(counted)}"
        f"; reported at the wait or the helper's call site: {len(exact)}/{len(hits)}"
    )
    rules = sorted({label.rule for label in counted})
    for rule in rules:
        of_rule = [label for label in counted if label.rule == rule]
        got = [label for label in of_rule if label in found]
        same = [label for label in got if found[label].code == rule]
        print(f"  {rule}: {len(got)}/{len(of_rule)} (by {rule} itself: {len(same)})")
    false_per_code: Counter[str] = Counter()
    print()
    print("false findings:")
    for label, finding in sorted(found.items(), key=lambda item: where(item[0])):
        if label.kind in FALSE_WHEN_FLAGGED:
            false_per_code[finding.code] += 1
            print(f"  on a {label.kind} wait: {finding.show()}  [{where(label)}]")
    for name, finding in unmatched:
        false_per_code[finding.code] += 1
        print(f"  on nothing: {name}/{finding.show()}")
    for label, finding in extra:
        print(f"  (a second finding about {where(label)}: {finding.show()})")
    if not false_per_code:
        print("  none")
    for code in codes:
        print(f"  {code}: {false_per_code[code]}")
    others = [
        (label, found[label])
        for label in labels
        if label.kind in ("medium", "deliberate") and label in found
    ]
    if others:
        print()
        print("findings on medium or deliberate waits (not counted):")
        for label, finding in others:
            print(f"  [{label.kind}] {where(label)}: {finding.show()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    mat = sub.add_parser("materialise", help="copy the pinned files out of the mirrors")
    mat.add_argument("dest", type=Path)
    mat.add_argument("--dense", action="store_true", help="only the files that call Tinker")
    mat.add_argument(
        "--mirrors",
        type=Path,
        required=True,
        help="the git mirrors, one DIR/OWNER+NAME/repo per repository (`fetch github:OWNER/NAME`)",
    )
    mat.add_argument("--force", action="store_true", help="write into a non-empty DEST")
    mat.add_argument(
        "--pins",
        type=Path,
        default=PINS,
        help="the projects file (default bench/ecosystem.toml; bench/heldout.toml is the held-out set)",
    )
    cmp_ = sub.add_parser("compare", help="lint the corpus at two revisions, print the changes")
    cmp_.add_argument("--base", required=True, help="git revision of tinker-lint to compare from")
    cmp_.add_argument("--head", help="git revision to compare to (default: the working tree)")
    cmp_.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    cmp_.add_argument("--project", help="only this project (owner/name)")
    cmp_.add_argument(
        "--pins", type=Path, default=PINS, help="the projects file, as for materialise"
    )
    sco = sub.add_parser("score", help="recall and false findings on the hand-labelled files")
    sco.add_argument("--ref", help="git revision of tinker-lint (default: the working tree)")
    sco.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    sco.add_argument(
        "--codes",
        default=",".join(PIPELINE_CODES),
        help="codes to score, comma-separated (`cpu`: TNK201-TNK205)",
    )
    sco.add_argument("--verbose", action="store_true", help="every label, with its reason")
    sco.add_argument(
        "--labels",
        type=Path,
        default=LABELS,
        help="the labels file (default bench/ecosystem-labels.toml; bench/fresh-labels.toml is "
        "the fresh set, materialised with --pins bench/fresh.toml)",
    )
    args = parser.parse_args(argv)
    if args.command == "materialise":
        materialise(args.dest, args.mirrors, args.dense, args.force, args.pins)
        return 0
    if args.command == "score":
        codes = CPU_CODES if args.codes == "cpu" else tuple(args.codes.split(","))
        return score(args.ref, args.corpus, codes, args.verbose, args.labels)
    return compare(args.base, args.head, args.corpus, args.project, args.pins)


if __name__ == "__main__":
    sys.exit(main())
