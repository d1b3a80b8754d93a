"""Jupyter notebooks (issue 13, item 7): the code cells are linted, findings are reported in cell
coordinates in every format, and ``--fix`` writes the notebook back with only the changed cells'
source lines replaced."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from tinker_lint.cli import main
from tinker_lint.diagnostics import Diagnostic, Edit, Fix
from tinker_lint.io.notebook import read_notebook
from tinker_lint.report.github import annotation

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "tests" / "data" / "notebooks"
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
TARGET = ("--tinker-version", "0.38.0")  # TNK105 applies from 0.38, and its fix is then safe

# (cell, line, column, code) of what train.ipynb holds: all in cell 3. Cell 4 (``%%time``) has
# the same loop and is not linted; the masked lines of cells 2 and 6 give nothing.
TRAIN_FINDINGS = [(3, 3, 66, "TNK101"), (3, 4, 58, "TNK102"), (3, 8, 17, "TNK105")]


@pytest.fixture
def work(tmp_path, monkeypatch):
    shutil.copytree(NOTEBOOKS, tmp_path / "nb")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv):
    code = main(["--isolated", "--no-cache", *TARGET, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def concise(out: str) -> list[str]:
    return [line for line in out.splitlines() if ": TNK" in line]


def notebook(cells, **top) -> str:
    document = {
        "cells": cells,
        "metadata": top.pop("metadata", {}),
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1) + "\n"


def code_cell(source, **extra):
    return {"cell_type": "code", "metadata": {}, "outputs": [], "source": source, **extra}


LOOP = [
    "import tinker\n",
    'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n',
    "for batch in batches:\n",
    '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()\n',
    "    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()",
]


def test_a_directory_walk_lints_notebooks_in_cell_coordinates(work, capsys):
    """Before: ``.ipynb`` files were not discovered at all (``All checks passed!``)."""
    code, out, err = run(capsys, "--output-format", "concise", "nb")
    assert code == 1, err
    assert concise(out) == [
        f"nb/train.ipynb:cell {cell}:{line}:{col}: {rule}" + concise_tail(out, rule)
        for cell, line, col, rule in TRAIN_FINDINGS
    ]
    assert "2 files checked" in out  # train.ipynb and empty.ipynb


def concise_tail(out: str, rule: str) -> str:
    line = next(line for line in out.splitlines() if f": {rule} " in line)
    return line[line.index(f": {rule}") + len(f": {rule}") :]


def test_a_named_notebook_is_not_parsed_as_a_dict_literal(work, capsys):
    """Before: a notebook named on the command line was read as Python (a dict literal) and
    passed."""
    code, out, _ = run(capsys, "--output-format", "json", "nb/train.ipynb")
    assert code == 1
    found = json.loads(out)
    assert [
        (d["cell"], d["location"]["row"], d["location"]["column"], d["code"]) for d in found
    ] == (TRAIN_FINDINGS)
    tnk101 = found[0]
    assert tnk101["end_location"] == {"row": 3, "column": 72}
    # The fix's edit is in the cell's lines too (ruff's JSON does the same).
    edit = tnk101["fix"]["edits"][0]
    assert (edit["location"], edit["end_location"]) == (
        {"row": 3, "column": 1},
        {"row": 5, "column": 1},
    )


def test_full_text_shows_the_cells_lines(work, capsys):
    code, out, _ = run(capsys, "nb/train.ipynb")
    assert code == 1
    first = out.split("\n\n")[0].splitlines()
    assert first[0].startswith("nb/train.ipynb:cell 3:3:66: TNK101 [*] ")
    assert first[1:6] == [
        "  |",
        '1 | tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()',
        "2 | for batch in batches:",
        '3 |     result = tc.forward_backward(batch, loss_fn="cross_entropy").result()',
        "  |" + " " * 66 + "^" * 6 + " TNK101 wait-before-submit (error)",
    ]


def test_sarif_is_valid_and_carries_the_cell(work, capsys):
    code, out, _ = run(capsys, "--output-format", "sarif", "nb/train.ipynb")
    assert code == 1
    document = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    results = document["runs"][0]["results"]
    properties = [r["locations"][0]["physicalLocation"]["region"]["properties"] for r in results]
    assert [
        (p["cell"], p["cellLine"], p["cellColumn"], r["ruleId"])
        for p, r in zip(properties, results, strict=True)
    ] == TRAIN_FINDINGS
    assert results[0]["message"]["text"].startswith("cell 3:3:66: Waiting for `forward_backward`")
    # A cell's fix edits the cell's text, which no replacement in the JSON artifact can say.
    assert ["fixes" in r for r in results] == [False, False, False]


def test_github_annotation_of_a_cell_without_its_place_in_the_file_is_at_1_1():
    """As ruff's for every notebook finding: a diagnostic from an older version's cache."""
    d = Diagnostic("nb.ipynb", 12, 5, "TNK101", "m", 12, 9, cell=3)
    assert annotation(d) == (
        "::error title=tinker-lint (TNK101),file=nb.ipynb,line=1,col=1,endLine=1,endColumn=1"
        "::nb.ipynb:cell 3:12:5: TNK101 m"
    )


# Issue 28, item 7: a notebook whose cell 3 has TNK101 (its line 3, columns 66-72) and TNK102
# (line 4, column 58), written out so that the JSON lines can be counted: the strings of cell 3's
# source are lines 10-13, each indented 4 and opened by a quote, and two ``\"`` escapes stand
# before both findings. So TNK101 is at 12:73-79 (4 + 1 + 65 + 2 + 1) and TNK102 at 13:63.
CI_NOTEBOOK = r"""{
 "cells": [
  {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
  {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["import tinker\n"]},
  {
   "cell_type": "code",
   "metadata": {},
   "outputs": [],
   "source": [
    "tc = tinker.ServiceClient().create_lora_training_client(base_model=\"m\").result()\n",
    "for batch in batches:\n",
    "    result = tc.forward_backward(batch, loss_fn=\"cross_entropy\").result()\n",
    "    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()"
   ]
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}
"""

# The same cell 3 as one string on line 5, after 65 characters and its opening quote (column 66):
# each line before a finding adds its characters, 2 per ``\"`` and 2 for its ``\n``. TNK101
# (cell 3:3:66): 66 + (80 + 2 + 2) + (21 + 2) + (65 + 2) + 1 = 241; TNK102 (cell 3:4:58):
# 66 + 84 + 23 + (73 + 2 + 2) + 57 + 1 = 308.
ONE_STRING = (
    "{\n"
    ' "cells": [\n'
    '  {"cell_type": "markdown", "metadata": {}, "source": "# Training"},\n'
    '  {"cell_type": "code", "metadata": {}, "outputs": [], "source": "import tinker"},\n'
    '  {"cell_type": "code", "metadata": {}, "outputs": [], "source": '
    + json.dumps("".join(LOOP[1:]))
    + "}\n"
    " ],\n"
    ' "metadata": {},\n'
    ' "nbformat": 4,\n'
    ' "nbformat_minor": 5\n'
    "}\n"
)


def ci_run(capsys, path, output_format, *argv):
    code = main(["--isolated", *TARGET, "--output-format", output_format, *argv, str(path)])
    out, err = capsys.readouterr()
    assert code == 1, err
    return out


def messages(capsys, path) -> dict[str, str]:
    found = json.loads(ci_run(capsys, path, "json", "--no-cache"))
    return {d["code"]: d["message"] for d in found}


@pytest.mark.parametrize(
    ("content", "tnk101", "tnk102"),
    [
        (CI_NOTEBOOK, (12, 73, 12, 79), (13, 63, 13, 69)),
        (ONE_STRING, (5, 241, 5, 247), (5, 308, 5, 314)),
    ],
    ids=["list-of-lines", "one-string"],
)
def test_github_annotations_are_on_the_cells_json_lines(tmp_path, capsys, content, tnk101, tnk102):
    """Before: ``line=3`` and ``line=4`` (the cell's lines), unrelated lines of the JSON text."""
    path = tmp_path / "nb.ipynb"
    path.write_text(content)
    text = messages(capsys, path)
    assert ci_run(capsys, path, "github", "--no-cache").splitlines() == [
        f"::error title=tinker-lint (TNK101),file={path},line={tnk101[0]},col={tnk101[1]},"
        f"endLine={tnk101[2]},endColumn={tnk101[3]}::{path}:cell 3:3:66: TNK101 " + text["TNK101"],
        f"::error title=tinker-lint (TNK102),file={path},line={tnk102[0]},col={tnk102[1]},"
        f"endLine={tnk102[2]},endColumn={tnk102[3]}::{path}:cell 3:4:58: TNK102 " + text["TNK102"],
    ]
    # The places are the code's: the JSON text there is what the cell has at the finding.
    lines = content.splitlines()
    assert lines[tnk101[0] - 1][tnk101[1] - 1 : tnk101[3] - 1] == "result"
    assert lines[tnk102[0] - 1][tnk102[1] - 1 : tnk102[3] - 1] == "result"


def test_sarif_regions_are_on_the_cells_json_lines(tmp_path, capsys):
    path = tmp_path / "nb.ipynb"
    path.write_text(CI_NOTEBOOK)
    text = messages(capsys, path)
    document = json.loads(ci_run(capsys, path, "sarif", "--no-cache"))
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    results = document["runs"][0]["results"]
    assert [
        (r["ruleId"], r["message"]["text"], r["locations"][0]["physicalLocation"]["region"])
        for r in results
    ] == [
        (
            "TNK101",
            "cell 3:3:66: " + text["TNK101"],
            {
                "startLine": 12,
                "startColumn": 73,
                "endLine": 12,
                "endColumn": 79,
                "properties": {"cell": 3, "cellLine": 3, "cellColumn": 66},
            },
        ),
        (
            "TNK102",
            "cell 3:4:58: " + text["TNK102"],
            {
                "startLine": 13,
                "startColumn": 63,
                "endLine": 13,
                "endColumn": 69,
                "properties": {"cell": 3, "cellLine": 4, "cellColumn": 58},
            },
        ),
    ]


def test_json_and_concise_keep_the_cells_coordinates(tmp_path, capsys):
    path = tmp_path / "nb.ipynb"
    path.write_text(CI_NOTEBOOK)
    found = json.loads(ci_run(capsys, path, "json", "--no-cache"))
    assert [(d["cell"], d["location"], d["end_location"]) for d in found] == [
        (3, {"row": 3, "column": 66}, {"row": 3, "column": 72}),
        (3, {"row": 4, "column": 58}, {"row": 4, "column": 64}),
    ]
    assert [
        line.split(" ")[:2] for line in concise(ci_run(capsys, path, "concise", "--no-cache"))
    ] == [
        [f"{path}:cell", "3:3:66:"],
        [f"{path}:cell", "3:4:58:"],
    ]


def test_the_json_place_survives_the_cache(tmp_path, capsys):
    path = tmp_path / "nb.ipynb"
    path.write_text(CI_NOTEBOOK)
    cache = ("--cache-dir", str(tmp_path / "cache"))
    first = ci_run(capsys, path, "github", *cache)
    assert "line=12,col=73," in first
    assert ci_run(capsys, path, "github", *cache) == first  # answered from the cache


def test_fix_rewrites_only_the_changed_source_lines(work, capsys):
    path = work / "nb" / "train.ipynb"
    before = path.read_bytes()
    code, out, err = run(capsys, "--fix", "--output-format", "concise", str(path))
    assert code == 1, err  # TNK102 has no fix
    assert concise(out) == [f"{path}:cell 3:4:58: TNK102" + concise_tail(out, "TNK102")]
    after = path.read_bytes()
    old, new = before.decode().splitlines(True), after.decode().splitlines(True)
    changed = [
        (tag, old[a1:a2], new[b1:b2])
        for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(a=old, b=new).get_opcodes()
        if tag != "equal"
    ]
    assert changed == [
        (
            "replace",
            [
                '    "    result = tc.forward_backward(batch, loss_fn=\\"cross_entropy\\").result()\\n",\n'
            ],
            [
                '    "    result_future = tc.forward_backward(batch, loss_fn=\\"cross_entropy\\")\\n",\n'
            ],
        ),
        ("insert", [], ['    "    result = result_future.result()\\n",\n']),
        (
            "replace",
            [
                '    "    fut = await training_client.forward_backward_async(batch, loss_fn=\\"cross_entropy\\")\\n",\n'
            ],
            [
                '    "    fut = training_client.forward_backward(batch, loss_fn=\\"cross_entropy\\")\\n",\n'
            ],
        ),
    ]
    assert after.endswith(b"}\n") and "“é”".encode() in after  # trailing newline, no escapes
    cells_before, cells_after = json.loads(before)["cells"], json.loads(after)["cells"]
    assert [c for i, c in enumerate(cells_after) if i != 2] == [
        c for i, c in enumerate(cells_before) if i != 2
    ]
    # A second --fix finds nothing left to fix and leaves the bytes alone.
    code, out, _ = run(capsys, "--fix", "--output-format", "concise", str(path))
    assert code == 1
    assert "fixed" not in out
    assert path.read_bytes() == after


def test_fix_keeps_a_string_source_and_the_files_own_layout(tmp_path, capsys):
    """Another writer's layout: two-space indent, keys unsorted, ``\\u`` escapes, no final line
    break, ``"source"`` as one string: all of it stays; only that string changes."""
    document = {
        "nbformat": 4,
        "nbformat_minor": 4,
        "cells": [
            {"source": "# caf\u00e9", "cell_type": "markdown", "metadata": {}},
            code_cell("".join(LOOP), execution_count=7),
        ],
        "metadata": {},
    }
    text = json.dumps(document, indent=2)
    path = tmp_path / "other.ipynb"
    path.write_text(text)
    code, _, err = run(capsys, "--fix", str(path))
    assert code == 1, err
    after = path.read_text()
    old_source = json.dumps("".join(LOOP))
    fixed = "".join(LOOP).replace(
        '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()\n'
        "    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()",
        '    result_future = tc.forward_backward(batch, loss_fn="cross_entropy")\n'
        "    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()\n"
        "    result = result_future.result()",
    )
    assert after == text.replace(old_source, json.dumps(fixed))
    assert "caf\\u00e9" in after and not after.endswith("\n")


def test_diff_shows_each_changed_cell_and_writes_nothing(work, capsys):
    path = work / "nb" / "train.ipynb"
    before = path.read_bytes()
    code, out, _ = run(capsys, "--diff", str(path))
    assert code == 1
    assert path.read_bytes() == before
    assert out.splitlines()[:3] == [
        f"--- {path}:cell 3",
        f"+++ {path}:cell 3",
        "@@ -1,9 +1,10 @@",
    ]
    assert "+    result = result_future.result()" in out.splitlines()


def test_a_fix_over_a_masked_magic_line_is_dropped(tmp_path, capsys):
    """The TNK101 fix moves the lines between the wait and the next submit: with ``%time`` among
    them, the fix would lose the magic, so the finding is reported without a fix."""
    source = [*LOOP[:4], "    %time print(batch)\n", LOOP[4]]
    path = tmp_path / "magic.ipynb"
    path.write_text(notebook([code_cell(source)]))
    before = path.read_bytes()
    code, out, _ = run(capsys, "--fix", "--output-format", "concise", str(path))
    assert code == 1
    assert [line.split(" ")[0:2] for line in concise(out)] == [
        [f"{path}:cell", "1:4:66:"],
        [f"{path}:cell", "1:6:58:"],
    ]
    assert "[*]" not in out
    assert path.read_bytes() == before


def test_a_fix_at_the_end_of_a_cell_stays_in_it(tmp_path, capsys):
    """The loop ends its cell: the fix's whole-line edit ends at the next cell's first line
    (column 1), which it leaves as it was."""
    path = tmp_path / "end.ipynb"
    path.write_text(notebook([code_cell(LOOP), code_cell(["print('next')"])]))
    code, _, err = run(capsys, "--fix", str(path))
    assert code == 1, err
    cells = json.loads(path.read_text())["cells"]
    assert cells[0]["source"][-3:] == [
        '    result_future = tc.forward_backward(batch, loss_fn="cross_entropy")\n',
        "    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()\n",
        "    result = result_future.result()",
    ]
    assert cells[1]["source"] == ["print('next')"]


def test_a_fix_after_a_cached_lint(tmp_path, capsys, monkeypatch):
    """The cache holds a notebook's findings in cell coordinates; a fix run must not hand them
    to the fixer, which works on the joined text."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "cached.ipynb"
    path.write_text(
        notebook([{"cell_type": "markdown", "metadata": {}, "source": "x"}, code_cell(LOOP)])
    )
    argv = [
        "--isolated",
        *TARGET,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--output-format",
        "concise",
    ]
    assert main([*argv, str(path)]) == 1
    first = concise(capsys.readouterr().out)
    assert main([*argv, str(path)]) == 1
    assert concise(capsys.readouterr().out) == first  # answered from the cache, same cells
    assert first[0].startswith(f"{path}:cell 2:4:66: TNK101")
    assert main([*argv, "--fix", str(path)]) == 1
    capsys.readouterr()
    assert (
        "    result = result_future.result()" in json.loads(path.read_text())["cells"][1]["source"]
    )


@pytest.mark.parametrize(
    ("content", "line", "col", "message"),
    [
        (
            '{\n "cells": [\n  {"cell_type": "code", "source": ["x = 1"]\n ]\n}\n',
            4,
            2,
            "Cannot read notebook: not valid JSON: Expecting ',' delimiter",
        ),
        (
            '{"nbformat": 3, "cells": []}',
            1,
            1,
            "Cannot read notebook: nbformat 3 is not supported (only nbformat 4)",
        ),
        (
            "[1, 2]",
            1,
            1,
            'Cannot read notebook: not a Jupyter notebook: no "cells" list at its top level',
        ),
        (
            '{"cells": [{"cell_type": "code", "source": 3}]}',
            1,
            1,
            'Cannot read notebook: not a Jupyter notebook: cell 1\'s "source" is not text',
        ),
    ],
)
def test_an_invalid_notebook_is_a_tnk001_finding(tmp_path, capsys, content, line, col, message):
    path = tmp_path / "broken.ipynb"
    path.write_text(content)
    for extra in ((), ("--fix",)):
        code, out, err = run(capsys, "--output-format", "concise", *extra, str(path))
        assert code == 1
        assert concise(out) == [f"{path}:{line}:{col}: TNK001 {message}"]
        assert "Traceback" not in err
        assert path.read_text() == content


@pytest.mark.parametrize("content", ["", "\n", None])
def test_an_empty_notebook_passes(tmp_path, capsys, content):
    path = tmp_path / "empty.ipynb"
    path.write_text((NOTEBOOKS / "empty.ipynb").read_text() if content is None else content)
    code, out, _ = run(capsys, str(path))
    assert (code, out) == (0, "All checks passed! (1 file checked)\n")


def test_a_notebook_of_another_language_has_no_python(tmp_path, capsys):
    path = tmp_path / "r.ipynb"
    metadata = {"language_info": {"name": "R"}}
    path.write_text(notebook([code_cell(LOOP)], metadata=metadata))
    code, out, _ = run(capsys, str(path))
    assert (code, out) == (0, "All checks passed! (1 file checked)\n")


def test_noqa_in_a_cell(tmp_path, capsys):
    source = [*LOOP[:3], LOOP[3].rstrip("\n") + "  # noqa: TNK101\n", LOOP[4]]
    path = tmp_path / "noqa.ipynb"
    path.write_text(notebook([code_cell(source)]))
    code, out, _ = run(capsys, "--output-format", "concise", str(path))
    assert code == 1
    assert [line.split(": ")[1].split(" ")[0] for line in concise(out)] == ["TNK102"]


def test_the_joined_text_keeps_every_line_in_place():
    """Magic, shell and help lines become ``pass`` with their indentation; a ``%`` or ``!=`` that
    continues an expression, and a line in a string, stay Python; cell magics and automagic
    cells are left out, a Python line that starts with a magic's name is not."""
    cells = [
        code_cell(["%pip install tinker\n", "!nvidia-smi\n", "x = (1\n", "  % 2)\n", "y = x?"]),
        code_cell(["%%bash\n", "echo hi"]),
        code_cell("pip install tinker"),
        code_cell(
            ["for i in range(3):\n", "    !echo $i\n", 's = """\n', "!not a shell line\n", '"""']
        ),
        code_cell("time = 3\nfiles = !ls\nlen?"),
        code_cell([]),
    ]
    nb = read_notebook(notebook(cells).encode())
    assert nb.text.splitlines() == [
        "pass",
        "pass",
        "x = (1",
        "  % 2)",
        "y = x?",  # not help: ``?`` after an expression is a syntax error Python reports
        "for i in range(3):",
        "    pass",
        's = """',
        "!not a shell line",
        '"""',
        "time = 3",
        "pass",
        "pass",
        "",
    ]
    assert [(c.number, c.first_line) for c in nb.cells] == [(1, 1), (4, 6), (5, 11), (6, 14)]
    assert nb.where(7) == (4, 2)
    assert nb.where(14) == (6, 1)
    assert nb.where(15) is None


def test_locate_drops_a_fix_that_crosses_cells():
    nb = read_notebook(notebook([code_cell("a = 1"), code_cell("b = 2")]).encode())
    crossing = Fix("m", (Edit("c = 3", (1, 1), (2, 6)),))
    inside = Fix("m", (Edit("c", (2, 1), (2, 2)),))
    found = nb.locate(
        [
            Diagnostic("n.ipynb", 1, 1, "TNK101", "m", 1, 2, fix=crossing),
            Diagnostic("n.ipynb", 2, 1, "TNK101", "m", 2, 2, fix=inside),
        ]
    )
    assert [(d.cell, d.line, d.fix) for d in found] == [
        (1, 1, None),
        (2, 1, Fix("m", (Edit("c", (1, 1), (1, 2)),))),
    ]


def test_a_syntax_error_and_a_noqa_typo_name_their_cell(tmp_path, capsys):
    path = tmp_path / "syntax.ipynb"
    path.write_text(
        notebook([code_cell("import tinker"), code_cell(["x = 1  # noqa: TNK999\n", "def f(:\n"])])
    )
    for extra in ((), ("--fix",)):
        code, out, err = run(capsys, "--output-format", "concise", *extra, str(path))
        assert code == 1
        assert concise(out) == [f"{path}:cell 2:2:5: TNK001 SyntaxError: invalid syntax"]
        assert f"{path}:cell 2:1: unknown rule code `TNK999`" in err


def test_stdin_notebook(capsys, monkeypatch):
    """An editor's buffer (``-`` with ``--stdin-filename``): linted as a notebook, and ``--fix``
    writes the fixed notebook's JSON to stdout."""
    import io

    raw = (NOTEBOOKS / "train.ipynb").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code, out, _ = run(capsys, "--output-format", "concise", "--stdin-filename", "nb.ipynb", "-")
    assert code == 1
    assert [line.split(": ")[0] for line in concise(out)] == [
        f"nb.ipynb:cell {cell}:{line}:{col}" for cell, line, col, _ in TRAIN_FINDINGS
    ]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code, out, _ = run(capsys, "--fix", "--stdin-filename", "nb.ipynb", "-")
    cells = json.loads(out)["cells"]
    assert "    result = result_future.result()\n" in cells[2]["source"]


def test_a_fix_keeps_the_magic_lines_around_it(tmp_path, capsys):
    """The fix adds a line to the cell: the masked lines after it move down with it, and are
    written back as they were (not as the ``pass`` the linter saw)."""
    source = ["%pip install tinker\n", *LOOP[:4], LOOP[4] + "\n", "!echo done\n", "files?"]
    path = tmp_path / "around.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + notebook([code_cell(source)]).encode())
    code, _, err = run(capsys, "--fix", str(path))
    assert code == 1, err
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # a BOM stays
    assert json.loads(raw[3:])["cells"][0]["source"] == [
        "%pip install tinker\n",
        *LOOP[:3],
        '    result_future = tc.forward_backward(batch, loss_fn="cross_entropy")\n',
        "    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()\n",
        "    result = result_future.result()\n",
        "!echo done\n",
        "files?",
    ]


def test_an_undecodable_notebook_is_located_in_its_bytes(tmp_path, capsys):
    path = tmp_path / "latin.ipynb"
    path.write_bytes(b'\xef\xbb\xbf{"cells": [],\n "x": "caf\xe9"}')
    code, out, _ = run(capsys, "--output-format", "concise", str(path))
    assert code == 1
    assert concise(out) == [
        f"{path}:2:11: TNK001 Cannot read notebook: not valid UTF-8 (byte 0xE9)"
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_in_file_steps_over_escapes_and_ends_at_the_last_quote(newline):
    """Each escape is one character of the cell (a surrogate pair too); the line past a final
    line break is at the last string's closing quote. The file's own line breaks may be CRLF."""
    text = (
        '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": [\n'
        '"s = \\"\\ud83d\\ude00\\u00e9\\"; x = 1\\n",\n'
        '"y = 2\\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'
    ).replace("\n", newline)
    nb = read_notebook(text.encode())
    assert nb.sources[1] == 's = "\U0001f600\u00e9"; x = 1\ny = 2\n'
    # ``x`` is the cell's 1:11; on line 2 of the file, after the opening quote and ``s = ``,
    # ``\"``, ``\ud83d\ude00``, ``\u00e9``, ``\"`` take 2 + 12 + 6 + 2 characters, then ``; ``.
    assert nb.in_file(1, 1, 11) == (2, 1 + 4 + 2 + 12 + 6 + 2 + 2 + 1)
    assert text.splitlines()[1][30 - 1] == "x"
    assert nb.in_file(1, 2, 1) == (3, 2)
    assert nb.in_file(1, 3, 1) == (3, len('"y = 2\\n') + 1)  # the closing quote
