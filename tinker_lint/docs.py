"""Rule documentation, generated from the rule declarations so the pages cannot drift.

``python -m tinker_lint.docs`` writes ``docs/rules/TNKxxx.md`` (one page per code) and
``docs/rules/README.md`` (the index); ``--check`` only reports pages that differ. ``tinker-lint rule
TNK101`` prints the same page in the terminal, and ``tinker-lint rule --all`` lists the rules.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tinker_lint.codes import ALL_CODES, ENGINE_NAMES, is_opt_in, level_of, name_of
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.rules import DOCUMENTED_RULES
from tinker_lint.rules.base import Example, Rule


@dataclass(frozen=True)
class EngineCode:
    """A code the engine emits itself: documented here, as it has no rule class."""

    summary: str
    why: str
    fix_description: str


ENGINE_DOCS: dict[str, EngineCode] = {
    "TNK000": EngineCode(
        summary="tinker-lint failed while checking this file; other files and rules still ran",
        why="""\
A rule or the semantic model raised an exception on this file. tinker-lint reports it as a
diagnostic at line 1 instead of crashing, so one odd file cannot hide the findings in the others.
The message names the exception and where it was raised.
""",
        fix_description="Report it with the file (or a reduced copy); `# noqa: TNK000` on line 1 "
        "or `per-file-ignores` silences it meanwhile.",
    ),
    "TNK001": EngineCode(
        summary="The file cannot be read as Python (syntax error or undecodable bytes)",
        why="""\
tinker-lint never runs your code, but it must parse it. A file that is not valid Python for the
parser (or whose bytes do not decode as its coding cookie says) is reported instead of skipped,
so that a broken file is not mistaken for a clean one.
""",
        fix_description="Fix the syntax error or the encoding; `exclude` the file if it is not "
        "Python meant to run (a template, a fixture).",
    ),
    "TNK002": EngineCode(
        summary="The file was found but could not be read (permission denied, I/O error)",
        why="""\
A file that tinker-lint was asked to check and could not read is reported as a finding, as ruff's
E902 does, so that an unreadable file is not mistaken for a clean one. Special files (FIFOs,
devices), broken symbolic links and symlink loops are skipped with a warning instead.
""",
        fix_description="Make the file readable, or `exclude` it.",
    ),
    "TNK003": EngineCode(
        summary="The file was not analysed: it is larger than `max-file-chars` (1,000,000 by "
        "default), or libcst cannot parse it; only its syntax was checked",
        why="""Analysis costs about 20 s and 0.5 GB per million characters, and files that large are almost
always generated data rather than training loops, so tinker-lint checks only their syntax. Valid
Python that libcst cannot parse (its grammar lags CPython's, or its parser gives up: 4,000 adjacent
string literals), or that is nested too deeply for libcst or the model, is not analysed either; the
finding's help gives libcst's reason. It says so as a finding, in every output format (and in
SARIF's tool notifications), and the run exits 1: a file that was not checked must not look like a
file that passed.
""",
        fix_description="`exclude` the file if it is generated, or raise the limit with "
        "`--max-file-chars N` (0: no limit); split what libcst cannot parse (a long literal into "
        "a file of data).",
    ),
    "TNK004": EngineCode(
        summary="The configuration is not valid; tinker-lint checked nothing in this file",
        why="""\
Reported by the flake8 plugin (editors through pylsp, `flake8 --select TNK`) at line 1 of each file
it was asked to check, when `[tool.tinker-lint]` in the nearest `pyproject.toml`, or flake8's
`--tinker-version` option, is not valid. The message names the file and the key. The `tinker-lint`
command reports the same error on stderr and exits 2; so that an editor does not show findings the
command would not, the plugin reports this instead of the file's findings. flake8 gives a plugin
no other place a pylsp user would see.
""",
        fix_description="Correct the key the message names (`tinker-lint rule --all` lists the "
        'codes; `tinker-version` is a version such as `"0.38"`).',
    ),
}


def rule_codes() -> list[str]:
    """Every documented code in order: the engine's, then the rules' (the code registry's)."""
    return list(ALL_CODES)


def rule_name(code: str) -> str:
    return name_of(code)


def rule_summary(code: str) -> str:
    rule = DOCUMENTED_RULES.get(code)
    return rule.summary if rule is not None else ENGINE_DOCS[code].summary


def _example(example: Example, rule: type[Rule], quote: bool) -> list[str]:
    filename = example.filename  # dependency-file examples name their file
    language = (
        "python"
        if filename is None
        else ("toml" if filename.endswith((".toml", ".lock")) else "text")
    )
    lines = [f"```{language}", example.code.rstrip("\n"), "```"]
    if filename is not None:
        lines.insert(0, f"`{filename}`:\n")
    if example.tinker_version:
        lines.append(f'\n(with `tinker-version = "{example.tinker_version}"`)')
    if example.expect:
        where = ", ".join(f"line {line}, column {col}" for line, col in example.expect)
        lines.append(f"\n`{rule.code}` is reported at {where}" + (":" if quote else "."))
    if example.expect and quote:
        # What the finding says, as the engine fills the templates in: the message, and the
        # help (why and what to do) that only the ``full`` report shows in the terminal.
        for d in example_findings(rule, example):
            lines += ["", f"> {d.message}"]
            if d.help:
                lines += [">", f"> help: {d.help}"]
    return lines


EXAMPLE_TINKER_VERSION = "0.38.0"  # an example's target when it names none
EXAMPLE_PATH = "example.py"  # the file a Python example is linted as


def example_findings(rule: type[Rule], example: Example) -> list[Diagnostic]:
    """``rule``'s findings in ``example``, through the real engine (``tinker_lint.deps`` for a
    dependency file, whose Qwen VL evidence is then ``train.py`` line 1), in order."""
    from dataclasses import replace

    from packaging.version import Version

    from tinker_lint.deps.lint import QwenVlUse, lint_dependency_file
    from tinker_lint.io.settings import Settings
    from tinker_lint.run.engine import lint_text

    version = Version(example.tinker_version or EXAMPLE_TINKER_VERSION)
    settings = replace(Settings(), select=(rule.code,), tinker_version=version)
    if example.filename is not None:
        qwen = QwenVlUse("train.py", 1, "Qwen3-VL") if example.qwen_vl else None
        found = lint_dependency_file(example.filename, example.code, settings, qwen).diagnostics
    else:
        found = lint_text(example.code, EXAMPLE_PATH, settings).diagnostics
    return sorted(d for d in found if d.code == rule.code)


def rule_page(code: str, *, quote_findings: bool = True) -> str:
    """The Markdown page for ``code``. ``quote_findings``: each bad example's findings as the
    engine words them (it runs the engine on them; SARIF's embedded pages leave them out)."""
    rule = DOCUMENTED_RULES.get(code)
    if rule is None:
        engine = ENGINE_DOCS[code]
        parts = [
            f"# {code}: {ENGINE_NAMES[code]}",
            "",
            engine.summary + ".",
            "",
            _level_line(code),
            "",
            "## Why",
            "",
            engine.why.rstrip("\n"),
            "",
            "## Fix",
            "",
            engine.fix_description,
        ]
        return "\n".join(parts) + "\n"
    # Every section comes from a declared field; a missing one is an AttributeError here.
    parts = [f"# {rule.code}: {rule.name}", "", rule.summary.rstrip(".") + ".", ""]
    parts += [_level_line(code), ""]
    if is_opt_in(code):
        parts += [_opt_in_section(code), ""]
    parts += ["## Why", "", rule.why.rstrip("\n"), ""]
    if rule.min_tinker_version is not None:
        parts += [
            "## Tinker versions",
            "",
            f"Reported only when the project targets tinker {rule.min_tinker_version} or newer "
            "(`--tinker-version`, `tinker-version` under `[tool.tinker-lint]`, or else the "
            "installed tinker).",
            "",
        ]
    for title, examples in (("Bad", rule.INVALID), ("Good", rule.VALID)):
        if not examples:
            continue
        parts += [f"## {title}", ""]
        for example in examples:
            parts += [*_example(example, rule, quote_findings), ""]
    parts += ["## Fix", "", rule.fix_description.rstrip("\n"), ""]
    if rule.autofix is not None:
        parts += [f"`tinker-lint --fix` applies this fix: {rule.autofix.title.rstrip('.')}.", ""]
        for example in rule.INVALID:
            if example.fixed is not None:
                parts += [
                    "The bad example after `tinker-lint --fix`:",
                    "",
                    "```python",
                    example.fixed.rstrip("\n"),
                    "```",
                    "",
                ]
    parts += [
        "## Silence it",
        "",
        f'`# noqa: {rule.code}` on the reported line, or `ignore = ["{rule.code}"]` (or '
        "`per-file-ignores`) under `[tool.tinker-lint]` in `pyproject.toml`.",
    ]
    return "\n".join(parts) + "\n"


def _opt_in_section(code: str) -> str:
    """How to turn on a rule that is off by default: by its own code, in each front door."""
    return f"""\
## Off by default

This rule is opt-in: it runs only when its code is selected by name. Selecting `TNK`, `TNK4` or
`ALL` does not turn it on (ruff's convention for its preview rules). To turn it on:

- the command: `tinker-lint --extend-select {code}` (or `--select {code}`);
- `pyproject.toml`: `extend-select = ["{code}"]` under `[tool.tinker-lint]`;
- flake8: `--tinker-enable {code}`, or `tinker-enable = {code}` in the `[flake8]` section of
  `.flake8` / `setup.cfg` / `tox.ini` (flake8's own `--select` still decides what is shown)."""


def _default_of(code: str) -> str:
    return "off (opt-in)" if is_opt_in(code) else "on"


def _level_line(code: str) -> str:
    return (
        f"Level: **{level_of(code)}** (SARIF `level`, a GitHub annotation's kind; every finding "
        "still makes the run exit 1)."
    )


def index_page() -> str:
    lines = [
        "# tinker-lint rules",
        "",
        "Generated from the rules by `python -m tinker_lint.docs`; `tinker-lint rule CODE` prints "
        "a page in the terminal.",
        "",
        "| Code | Name | Level | Default | Summary |",
        "| --- | --- | --- | --- | --- |",
    ]
    for code in rule_codes():
        summary = rule_summary(code).replace("|", "\\|")
        lines.append(
            f"| [{code}]({code}.md) | {rule_name(code)} | {level_of(code)} | {_default_of(code)} "
            f"| {summary} |"
        )
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name (under docs/rules/) -> its generated text."""
    generated = {f"{code}.md": rule_page(code) for code in rule_codes()}
    generated["README.md"] = index_page()
    return generated


# VS Code's names for the levels (``flake8.severity``; SARIF's note is its Information).
VSCODE_SEVERITY = {"error": "Error", "warning": "Warning", "note": "Information"}
# The extension's own defaults for flake8's letters, kept beside ours.
VSCODE_DEFAULTS = {"E": "Error", "F": "Error", "I": "Information", "W": "Warning"}
_CODE_PREFIX = "TNK"  # shorter prefixes are other tools' too (flake8-print's T201)


def vscode_severity(levels: dict[str, str] | None = None) -> dict[str, str]:
    """The fewest ``flake8.severity`` entries that give every code its level in VS Code's Flake8
    extension, which takes the longest listed prefix of a code, else its first letter, else Error
    (microsoft/vscode-flake8, ``_get_severity``). ``levels``: code -> level (default: every
    code's). Each prefix of the codes listed or not, chosen
    by dynamic programming over the tree of their prefixes. Of two as short, the one that lists
    the shorter prefix (``TNK2``, which a new TNK2xx rule inherits, over ``TNK20``)."""
    if levels is None:
        levels = {code: level_of(code) for code in ALL_CODES}
    wanted = {code: VSCODE_SEVERITY[level] for code, level in levels.items()}
    choices = list(dict.fromkeys(VSCODE_SEVERITY.values()))

    def best(prefix: str, inherited: str) -> tuple[int, dict[str, str]]:
        if prefix in wanted:  # a whole code: listed only if what it inherits is not its level
            listed = {} if wanted[prefix] == inherited else {prefix: wanted[prefix]}
            return len(listed), listed
        below = sorted({code[: len(prefix) + 1] for code in wanted if code.startswith(prefix)})
        found: tuple[int, dict[str, str]] | None = None
        for choice in [*choices, None]:
            listed = {} if choice is None else {prefix: choice}
            for child in below:
                listed.update(best(child, choice or inherited)[1])
            if found is None or len(listed) < found[0]:
                found = len(listed), listed
        assert found is not None
        return found

    listed = best(_CODE_PREFIX, "Error")[1]  # "T" is not listed: Error, the extension's default
    return {**VSCODE_DEFAULTS, **dict(sorted(listed.items()))}


def vscode_settings_block() -> str:
    """The settings docs/configuration.md shows under "Levels under flake8"."""
    return json.dumps({"flake8.severity": vscode_severity()}, indent=2) + "\n"


# Blocks of hand-written pages that are generated: between these two lines in the page.
_BLOCK_START = "<!-- generated by `python -m tinker_lint.docs`: {name} -->"
_BLOCK_END = "<!-- end of the generated {name} -->"
GENERATED_BLOCKS = {"configuration.md": {"vscode-severity": vscode_settings_block}}


def with_blocks(page: str, blocks: dict[str, str]) -> str:
    """``page`` with each generated block's text replaced by ``blocks``'s (a fenced JSON block);
    ValueError when a block's markers are missing."""
    for name, text in blocks.items():
        start, end = _BLOCK_START.format(name=name), _BLOCK_END.format(name=name)
        before, found, rest = page.partition(start + "\n")
        _, ended, after = rest.partition(end)
        if not found or not ended:
            raise ValueError(f"the markers of the generated block {name!r} are missing")
        page = f"{before}{start}\n```json\n{text}```\n{end}{after}"
    return page


def write_blocks(directory: Path, *, check: bool) -> list[str]:
    """Write (or with ``check`` only compare) the generated blocks of the pages in ``directory``
    (docs/); returns the names of the pages that differed."""
    differ = []
    for name, blocks in GENERATED_BLOCKS.items():
        path = directory / name
        current = path.read_text(encoding="utf-8")
        text = with_blocks(current, {block: make() for block, make in blocks.items()})
        if text != current:
            differ.append(name)
            if not check:
                path.write_text(text, encoding="utf-8")
    return differ


def write_pages(directory: Path, *, check: bool) -> list[str]:
    """Write (or with ``check`` only compare) the pages; returns the names that differed, including
    stale pages of codes that no longer exist."""
    expected = pages()
    differ = []
    for name, text in expected.items():
        path = directory / name
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            differ.append(name)
            if not check:
                directory.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    for stale in sorted(directory.glob("*.md")) if directory.is_dir() else []:
        if stale.name not in expected:
            differ.append(stale.name)
            if not check:
                stale.unlink()
    return differ


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tinker_lint.docs", description="Generate docs/rules/ from the rules."
    )
    parser.add_argument("--out", default="docs/rules", help="directory (default: docs/rules)")
    parser.add_argument(
        "--pages",
        default="docs",
        help="the directory of the pages with generated blocks (default: docs; none if missing)",
    )
    parser.add_argument("--check", action="store_true", help="only report pages that differ")
    args = parser.parse_args(argv)
    differ = [Path(args.out) / name for name in write_pages(Path(args.out), check=args.check)]
    pages_directory = Path(args.pages)
    if (pages_directory / next(iter(GENERATED_BLOCKS))).is_file():
        try:
            differ += [
                pages_directory / name for name in write_blocks(pages_directory, check=args.check)
            ]
        except ValueError as error:
            sys.stderr.write(f"python -m tinker_lint.docs: {pages_directory}: {error}\n")
            return 2
    verb = "differs from the rules" if args.check else "written"
    for path in differ:
        sys.stdout.write(f"{path}: {verb}\n")
    return 1 if args.check and differ else 0


def rule_command(argv: Sequence[str]) -> int:
    """``tinker-lint rule CODE`` prints its page; ``tinker-lint rule --all`` lists every rule."""
    parser = argparse.ArgumentParser(
        prog="tinker-lint rule", description="Explain a rule, or list them all."
    )
    parser.add_argument("code", nargs="?", help="a rule code (TNK101) or name")
    parser.add_argument("--all", action="store_true", help="list every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    if args.all == (args.code is not None):
        parser.print_usage(sys.stderr)
        sys.stderr.write("tinker-lint rule: error: give one rule code, or --all\n")
        return 2
    if args.all:
        codes = rule_codes()
        if args.output_format == "json":
            rows = [_row(c) for c in codes]
            json.dump(rows, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            width = max(len(rule_name(c)) for c in codes)
            for code in codes:
                # An opt-in rule says so before its summary: a listing is where one is chosen.
                marker = "(opt-in) " if is_opt_in(code) else ""
                sys.stdout.write(
                    f"{code}  {rule_name(code):<{width}}  {marker}{rule_summary(code)}\n"
                )
        return 0
    wanted = args.code.strip()
    found = next(
        (c for c in rule_codes() if wanted.upper() == c or wanted.lower() == rule_name(c)), None
    )
    if found is None:
        sys.stderr.write(
            f"tinker-lint rule: error: unknown rule {wanted!r} (`tinker-lint rule --all` lists "
            "them)\n"
        )
        return 2
    code = found
    if args.output_format == "json":
        json.dump({**_row(code), "explanation": rule_page(code)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(rule_page(code))
    return 0


def _row(code: str) -> dict[str, object]:
    """A code in ``tinker-lint rule --output-format json``."""
    return {
        "code": code,
        "name": rule_name(code),
        "summary": rule_summary(code),
        "opt_in": is_opt_in(code),
    }


if __name__ == "__main__":
    raise SystemExit(main())
