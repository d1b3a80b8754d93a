"""bench/torch_score.py: how TNK4xx findings are judged against the host-sync labels (no linting
here: the findings are made up, the labels a small TOML file or the real one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_scripts import load

ROOT = Path(__file__).parent.parent
ts = load("torch_score")

LABELS = """
[[project]]
dir = "a+b"
source = "github"
name = "a/b"
version = "0123"
files = ["train.py", "clean.py"]

[[sync]]
project = "a+b"
path = "train.py"
line = 10
span = [9, 10]
kind = "high"
text = "loss.item()"
why = "per step, logging only"

[[sync]]
project = "a+b"
path = "train.py"
line = 12
kind = "medium"
text = "torch.isnan(loss)"
why = "NaN guard"

[[sync]]
project = "a+b"
path = "train.py"
line = 20
kind = "required"
text = "action.cpu()"
why = "before env.step"

[[sync]]
project = "a+b"
path = "train.py"
line = 30
kind = "cadence"
text = "loss.item()"
why = "under step % 10"

[[sync]]
project = "a+b"
path = "train.py"
line = 40
kind = "high"
rule = "TNK406"
text = "torch.cuda.empty_cache()"
why = "every step"
"""


def _load(tmp_path: Path, text: str = LABELS) -> tuple[list, list]:
    path = tmp_path / "labels.toml"
    path.write_text(text, encoding="utf-8")
    return ts.load(path)


def _finding(path: str, line: int, code: str = "TNK401", column: int = 5) -> object:
    return ts.Finding(path=path, line=line, column=column, code=code, message="m")


def test_labels_load_with_their_defaults(tmp_path):
    projects, labels = _load(tmp_path)
    assert [(p.dir, p.files) for p in projects] == [("a+b", ("train.py", "clean.py"))]
    assert [(x.line, x.span, x.kind, x.rule) for x in labels] == [
        (10, (9, 10), "high", "TNK401"),
        (12, (12, 12), "medium", "TNK401"),
        (20, (20, 20), "required", "TNK401"),
        (30, (30, 30), "cadence", "TNK401"),
        (40, (40, 40), "high", "TNK406"),
    ]


@pytest.mark.parametrize(
    ("replace", "by", "complaint"),
    [
        ('kind = "required"', 'kind = "fp"', "kind 'fp' is not one of"),
        ('rule = "TNK406"', 'rule = "TNK201"', "is not a TNK4xx code"),
        ("line = 30", "line = 20", "listed twice"),
        (
            'path = "train.py"\nline = 12',
            'path = "other.py"\nline = 12',
            "in no \\[\\[project\\]\\]",
        ),
    ],
)
def test_a_malformed_label_is_refused(tmp_path, replace, by, complaint):
    with pytest.raises(SystemExit, match=complaint):
        _load(tmp_path, LABELS.replace(replace, by, 1))


def test_every_finding_in_a_labelled_file_is_judged(tmp_path):
    _, labels = _load(tmp_path)
    findings = {
        "a+b": [
            _finding("train.py", 9),  # the first line of the statement of the high sync: found
            _finding("train.py", 20),  # on a required sync: false
            _finding("train.py", 31),  # next to the cadence label but outside its span: nothing
            _finding("train.py", 30, code="TNK404"),  # on a cadence label, another code: false
            _finding("train.py", 40, code="TNK406"),  # the empty_cache every step: found
            _finding("clean.py", 3),  # a labelled file with no sync labels: false
            _finding("train.py", 50, code="TNK101"),  # not a selected code: ignored
        ]
    }
    m = ts.match(labels, findings, "TNK4")
    assert {x.line: [f.line for f in fs] for x, fs in m.on_label.items()} == {
        10: [9],
        20: [20],
        30: [30],
        40: [40],
    }
    assert [(p, f.path, f.line) for p, f in m.unmatched] == [
        ("a+b", "clean.py", 3),
        ("a+b", "train.py", 31),
    ]
    lines = ts.report(labels, m, verbose=True)
    assert lines[0].split() == [
        "rule", "high", "found", "h+med", "found",
        "required", "cpu", "cadence", "eval", "amortized", "nothing",
    ]  # fmt: skip
    # high 1 of 1 found, high+medium 1 of 2; false: 1 on required, 2 on nothing (TNK401)
    assert lines[1].split() == ["TNK401", "1", "1", "2", "1", "1", "0", "0", "0", "0", "2"]
    # the TNK404 finding on the cadence label is charged to TNK404
    assert lines[2].split() == ["TNK404", "0", "0", "0", "0", "0", "0", "1", "0", "0", "0"]
    assert lines[3].split() == ["TNK406", "1", "1", "1", "1", "0", "0", "0", "0", "0", "0"]
    assert lines[4].split() == ["total", "2", "2", "3", "2", "1", "0", "1", "0", "0", "2"]
    assert lines[5] == "high found 2 of 2; false findings 4"
    assert "MISSED (medium TNK401) a+b/train.py:12: torch.isnan(loss)  -- NaN guard" in lines


def test_no_findings_scores_zero_recall_and_no_false_finding(tmp_path):
    _, labels = _load(tmp_path)
    lines = ts.report(labels, ts.match(labels, {"a+b": []}, "TNK4"), verbose=False)
    assert lines[-1] == "high found 0 of 2; false findings 0"


def test_a_stale_label_text_is_reported(tmp_path):
    _, labels = _load(tmp_path)
    (tmp_path / "a+b").mkdir()
    source = ["x = 1"] * 40
    source[9] = "    print(loss.item())"
    source[11] = "    if torch.isnan(loss): break"
    source[19] = "    env.step(action.cpu())"
    source[29] = "    lossf = loss.item()"
    source[39] = "    torch.cuda.synchronize()"  # not the labelled call
    (tmp_path / "a+b" / "train.py").write_text("\n".join(source), encoding="utf-8")
    assert ts.check_texts(labels, tmp_path) == [
        "a+b/train.py:40: expected 'torch.cuda.empty_cache()', found 'torch.cuda.synchronize()'"
    ]


def test_a_revision_without_the_rules_scores_zero_findings(tmp_path):
    (tmp_path / "t.py").write_text("import torch\n", encoding="utf-8")
    findings, note = ts.lint(ROOT, tmp_path, ("t.py",), "TNK4")
    if note.startswith("no such rule"):
        assert findings == []
    else:  # the TNK4xx rules have landed: a clean file has no finding
        assert (findings, note) == ([], "")


def test_the_real_labels_load():
    projects, labels = ts.load()
    assert {p.dir for p in projects} >= {"torchtune-0.6.1", "trl-1.16.0"}
    assert sum(1 for x in labels if x.kind == "high") >= 30


HELPER = """
[[project]]
dir = "a+b"
source = "github"
name = "a/b"
version = "0123"
files = ["train.py"]

[[sync]]
project = "a+b"
path = "train.py"
line = 5
call_sites = [20]
kind = "high"
text = "x.cpu().tolist()"
why = "metrics helper called every step"

[[sync]]
project = "a+b"
path = "train.py"
line = 6
call_sites = [20]
kind = "high"
text = "y.item()"
why = "the same helper"
"""


def test_a_finding_at_the_call_site_of_a_helper_counts_for_its_syncs(tmp_path):
    _, labels = _load(tmp_path, HELPER)
    assert [x.call_sites for x in labels] == [(20,), (20,)]
    findings = {"a+b": [_finding("train.py", 20), _finding("train.py", 21)]}
    m = ts.match(labels, findings, "TNK4")
    assert {x.line: [f.line for f in fs] for x, fs in m.on_label.items()} == {5: [20], 6: [20]}
    assert [f.line for _, f in m.unmatched] == [21]
    assert ts.report(labels, m, verbose=False)[-2:] == [
        "high found 2 of 2; false findings 1",
        "FALSE (no label) a+b: TNK401 train.py:21:5 m",
    ]


def test_the_baseline_flags_explicit_sync_calls_in_any_loop_of_the_same_function():
    source = """\
import torch
def log(x):
    return x.item()
for step in range(10):
    loss = model(x)
    print(loss.item(), len(loss))
    torch.cuda.empty_cache()
    def helper(y):
        return y.cpu()
    while True:
        sync = torch.cuda.synchronize()
model = torch.compile(model)
"""
    found = ts.naive_findings(source, "t.py")
    assert [(f.line, f.column, f.code, f.message) for f in found] == [
        (6, 11, "TNK401", "naive: item()"),
        (7, 5, "TNK406", "naive: empty_cache()"),
        (11, 16, "TNK401", "naive: synchronize()"),
    ]


def test_the_real_labels_match_the_materialised_corpus():
    projects, labels = ts.load()
    if not all((ts.DEFAULT_CORPUS / p.dir).is_dir() for p in projects):
        pytest.skip(
            f"not materialised: python3 bench/torch_score.py materialise {ts.DEFAULT_CORPUS}"
        )
    assert ts.check_texts(labels, ts.DEFAULT_CORPUS) == []
