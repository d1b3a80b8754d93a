"""bench/ecosystem.py's `score`: how findings are judged against the hand labels (no linting here:
the findings are made up, the labels are small TOML files or the real one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_scripts import load

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).parent.parent
eco = load("ecosystem")

LABELS = """
[[cpu]]
repo = "a/b"
path = "train.py"
line = 10
span = [10, 11]
kind = "cpu"
rule = "TNK203"
text = "torch.tensor(x)"
why = "per token"

[[cpu]]
repo = "a/b"
path = "train.py"
line = 12
kind = "cheap"
rule = "TNK201"
text = "tok.encode(p)"
why = "per request"

[[cpu]]
repo = "a/b"
path = "train.py"
line = 20
kind = "required"
rule = "TNK203"
text = "torch.tensor(tokens)"
why = "per datum"

[[cpu]]
repo = "a/b"
path = "train.py"
line = 30
kind = "debatable"
rule = "TNK201"
text = "tok.encode(row)"
why = "per step, small"

[[cpu]]
repo = "a/b"
path = "loop.py"
line = 5
kind = "cpu"
rule = "TNK205"
text = "np.load(path)"
why = "per step"
"""


def _labels(tmp_path: Path, text: str = LABELS) -> list:
    path = tmp_path / "labels.toml"
    path.write_text(text, encoding="utf-8")
    return eco.load_cpu_labels(path)


def _finding(path: str, line: int, code: str, column: int = 5) -> object:
    return eco.Finding(path=path, line=line, column=column, code=code, message="m")


def test_cpu_labels_load_with_their_span_and_fields(tmp_path):
    labels = _labels(tmp_path)
    assert [(x.path, x.line, x.span, x.kind, x.rule) for x in labels] == [
        ("train.py", 10, (10, 11), "cpu", "TNK203"),
        ("train.py", 12, (12, 12), "cheap", "TNK201"),
        ("train.py", 20, (20, 20), "required", "TNK203"),
        ("train.py", 30, (30, 30), "debatable", "TNK201"),
        ("loop.py", 5, (5, 5), "cpu", "TNK205"),
    ]
    assert labels[0].dirname == "a+b"
    assert labels[0].where() == "a/b/train.py:10"


@pytest.mark.parametrize(
    ("replace", "by", "complaint"),
    [
        ('kind = "cheap"', 'kind = "fp"', "kind 'fp' is not one of"),
        ('rule = "TNK205"', 'rule = "TNK102"', "names the TNK2xx rule expected"),
        ("line = 20", "line = 12", "listed twice"),
    ],
)
def test_a_malformed_cpu_label_is_refused(tmp_path, replace, by, complaint):
    with pytest.raises(SystemExit, match=complaint):
        _labels(tmp_path, LABELS.replace(replace, by))


def test_every_cpu_finding_is_judged_true_false_or_debatable(tmp_path):
    labels = _labels(tmp_path)
    findings = {
        "a+b": [
            _finding("train.py", 10, "TNK203"),  # the real per-token call
            _finding("train.py", 11, "TNK203", column=9),  # a second finding about it: true too
            _finding("train.py", 12, "TNK201"),  # on a cheap call: false
            _finding("train.py", 20, "TNK203"),  # on a required call: false
            _finding("train.py", 30, "TNK201"),  # debatable: not counted
            _finding("train.py", 40, "TNK204"),  # about no label: false
            _finding("train.py", 41, "TNK103"),  # not a scored code: ignored
            _finding("other.py", 3, "TNK203"),  # a file without labels: not judged
        ],
        "c+d": [_finding("train.py", 10, "TNK203")],  # a project without labels
    }
    match = eco.match_cpu(labels, findings, eco.CPU_CODES)
    assert {x.line: [(f.line, f.code) for f in fs] for x, fs in match.on_label.items()} == {
        10: [(10, "TNK203"), (11, "TNK203")],
        12: [(12, "TNK201")],
        20: [(20, "TNK203")],
        30: [(30, "TNK201")],
    }
    assert [(f.line, f.code) for f in match.true_findings()] == [(10, "TNK203"), (11, "TNK203")]
    assert [
        (name, f.line, label.kind if label else None) for name, f, label in match.false_findings()
    ] == [("a+b", 12, "cheap"), ("a+b", 20, "required"), ("a+b", 40, None)]
    assert [(f.line, f.code) for f in match.debatable_findings()] == [(30, "TNK201")]
    assert [(name, f.path, f.line) for name, f in match.unjudged] == [("a+b", "other.py", 3)]
    # The real np.load in loop.py was not found: recall 1 of 2.
    assert eco.cpu_table(labels, match, eco.CPU_CODES) == [
        "| rule | real labelled | found | true findings | false findings | on debatable |",
        "|---|---:|---:|---:|---:|---:|",
        "| TNK201 | 0 | 0 | 0 | 1 | 1 |",
        "| TNK202 | 0 | 0 | 0 | 0 | 0 |",
        "| TNK203 | 1 | 1 | 2 | 1 | 0 |",
        "| TNK204 | 0 | 0 | 0 | 1 | 0 |",
        "| TNK205 | 1 | 0 | 0 | 0 | 0 |",
        "| **total** | **2** | **1** | **2** | **3** | **1** |",
    ]


def test_a_finding_goes_to_the_nearest_label(tmp_path):
    labels = _labels(tmp_path)
    # Line 11 is in the real label's span only; line 12 is the cheap call itself.
    match = eco.match_cpu(labels, {"a+b": [_finding("train.py", 12, "TNK203")]}, eco.CPU_CODES)
    assert [(x.line, x.kind) for x in match.on_label] == [(12, "cheap")]


def test_only_the_codes_asked_for_are_judged(tmp_path):
    labels = _labels(tmp_path)
    findings = {"a+b": [_finding("train.py", 12, "TNK201"), _finding("train.py", 40, "TNK204")]}
    match = eco.match_cpu(labels, findings, ("TNK203",))
    assert match.on_label == {} and match.unmatched == [] and match.unjudged == []


def test_labels_whose_line_does_not_hold_their_text_are_reported(tmp_path):
    labels = _labels(tmp_path)
    project = tmp_path / "corpus" / "a+b"
    project.mkdir(parents=True)
    lines = [""] * 30
    lines[9] = "    y = torch.tensor(x)"
    lines[11] = "    ids = tok.encode(p)"
    lines[19] = "    t = torch.tensor(other)"  # the pin moved: another call on line 20
    lines[29] = "    ids = tok.encode(row)"
    (project / "train.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert eco.check_cpu_texts(labels, tmp_path / "corpus") == [
        "a/b/train.py:20: expected 'torch.tensor(tokens)', found 't = torch.tensor(other)'",
        f"a/b/loop.py:5: no such line in {project / 'loop.py'}",
    ]


def test_the_families_are_told_apart_by_code():
    assert [eco.is_cpu_code(c) for c in ("TNK201", "TNK205", "TNK206", "TNK101", "TNK104")] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_the_pipeline_report_is_unchanged(capsys):
    # TNK1xx scoring, split from the linting: the nearest finding per wait, a second one noted,
    # a finding on a required wait or on nothing counted false.
    label = eco.Label
    labels = [
        label("a/b", "t.py", 10, (8, 10), None, "serial", "TNK101", "w"),
        label("a/b", "t.py", 20, (20, 20), None, "required", "", "r"),
        label("a/b", "t.py", 30, (30, 30), 40, "serial", "TNK102", "h"),
    ]
    findings = {
        "a+b": [
            _finding("t.py", 8, "TNK101"),
            _finding("t.py", 10, "TNK101"),
            _finding("t.py", 20, "TNK103"),
            _finding("t.py", 50, "TNK102"),
            _finding("t.py", 20, "TNK203"),  # another family: not judged here
        ]
    }
    eco.report_pipeline(labels, {"a+b": labels}, findings, eco.PIPELINE_CODES, verbose=False)
    assert capsys.readouterr().out.splitlines() == [
        "",
        "labels (found: the finding; missed; on a required or harmless wait: a false finding):",
        "  [serial] a/b/t.py:10 TNK101: TNK101 (-2 lines)",
        "  [required] a/b/t.py:20 : TNK103 (at the wait)",
        "  [serial] a/b/t.py:30 TNK102: missed",
        "",
        "recall (serial and blocking waits found / labelled): 1/2; reported at the wait or the"
        " helper's call site: 0/1",
        "  TNK101: 1/1 (by TNK101 itself: 1)",
        "  TNK102: 0/1 (by TNK102 itself: 0)",
        "",
        "false findings:",
        "  on a required wait: TNK103 t.py:20:5 m  [a/b/t.py:20]",
        "  on nothing: a+b/TNK102 t.py:50:5 m",
        "  (a second finding about a/b/t.py:10: TNK101 t.py:10:5 m)",
        "  TNK101: 0",
        "  TNK102: 1",
        "  TNK103: 1",
        "  TNK104: 0",
    ]


def test_the_real_labels_load_and_name_pinned_files():
    pins = {p.repo: set(p.dense) | set(p.helpers) for p in eco.load_projects()}
    cpu = eco.load_cpu_labels()
    assert cpu, "the labels file has [[cpu]] labels"
    unpinned = [x.where() for x in cpu if x.path not in pins.get(x.repo, set())]
    assert unpinned == []
    assert all(x.text and x.why for x in cpu)
    # The TNK1xx labels are a separate table, read as before.
    raw = tomllib.loads((ROOT / "bench" / "ecosystem-labels.toml").read_text(encoding="utf-8"))
    assert len(eco.load_labels()) == len(raw["label"])


FRESH_PINS = ROOT / "bench" / "fresh.toml"
FRESH_LABELS = ROOT / "bench" / "fresh-labels.toml"


def test_score_takes_another_labels_file_and_defaults_to_the_first(monkeypatch):
    calls = []
    monkeypatch.setattr(eco, "score", lambda *args: calls.append(args) or 0)
    assert eco.main(["score", "--corpus", "/nowhere"]) == 0
    assert eco.main(["score", "--corpus", "/nowhere", "--labels", str(FRESH_LABELS)]) == 0
    assert [call[-1] for call in calls] == [eco.LABELS, FRESH_LABELS]
    assert eco.LABELS == ROOT / "bench" / "ecosystem-labels.toml"


def test_score_reads_the_labels_file_it_is_given(tmp_path, capsys):
    labels = tmp_path / "labels.toml"
    labels.write_text(
        '[[label]]\nrepo = "a/b"\npath = "t.py"\nwait = 3\nkind = "serial"\nrule = "TNK101"\n',
        encoding="utf-8",
    )
    # Nothing materialised there: the projects named by *this* file are missing, not the default's.
    with pytest.raises(SystemExit, match=r"not materialised: a\+b\n"):
        eco.score(None, tmp_path / "corpus", eco.PIPELINE_CODES, False, labels)


def test_the_fresh_set_is_new_code_and_its_labels_name_its_pinned_files():
    fresh = eco.load_projects(FRESH_PINS)
    used = {
        p.repo.lower()
        for pins in ("ecosystem.toml", "heldout.toml", "third.toml")
        for p in eco.load_projects(ROOT / "bench" / pins)
    }
    assert len(fresh) >= 10
    assert [p.repo for p in fresh if p.repo.lower() in used] == []
    assert [p.repo for p in fresh if "tinker-cookbook" in p.repo.lower()] == []
    assert all(len(p.commit) == 40 and p.dense and not p.speed for p in fresh)
    dense = {(p.repo, path) for p in fresh for path in p.dense}
    labels = eco.load_labels(FRESH_LABELS)
    assert {(x.repo, x.path) for x in labels} == dense  # every dense file is labelled
    assert all(
        x.kind in ("serial", "blocking", "medium", "deliberate", "required", "harmless")
        for x in labels
    )
    assert all(x.rule in eco.PIPELINE_CODES for x in labels if x.kind in eco.COUNTED)
    assert all(x.why for x in labels)
    places = [(x.repo, x.path, x.wait) for x in labels]
    assert len(set(places)) == len(places)
    assert eco.load_cpu_labels(FRESH_LABELS) == []
