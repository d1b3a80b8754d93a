"""``tinker-lint trace``: the front door, its outputs and exit codes (0 clean, 1 found, 2 bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.trace_logs import TRACE_EPOCH_US, Loop, TraceWriter, write_lines
from tinker_lint.cli import main
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.report.json import to_json

SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["trace", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_serialized_loop_text_report_and_exit_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(2).write(tmp_path / "run", watchdog=True)
    code, out, err = run(capsys, str(log_dir))
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"{log_dir}: evidence L0, L1, L2, L3, L4 (metrics.jsonl, timing_spans.jsonl, "
        "trace_events.jsonl, capture/train_op.jsonl, tinker_lint_runtime.jsonl)",
        "steps: 2 steps from 0; median step 600.0 ms; warm-up: step 0 takes 1.00x the median; "
        "get_batch 16.7% of step time (timing_spans.jsonl step extent)",
        "spans by time (timing_spans.jsonl, inclusive): wait_fwd 610.0 ms x2, get_batch 200.0 ms "
        "x2, compute_metrics 190.0 ms x2, wait_optim 190.0 ms x2",  # a tie: by name
        "coverage: client spans cover 1.200 s of 1.200 s (100.0%)",
        "training ops: 4, up to 1 in flight; seconds at depth 0/1: 0.220 / 0.780 "
        "(capture/train_op.jsonl (aligned by the runtime file's clock anchor))",
        "nothing queued: 220.0 ms of 1.000 s from the first submit to the last completion "
        "(22.0%, a lower bound on server idle)",
        "bubbles: 3 (a training op submitted with none in flight)",
        "  at 0.410 s: optim_step submitted 10.0 ms after forward_backward completed in wait_fwd",
        "  at 0.700 s: forward_backward submitted 200.0 ms after optim_step completed in wait_optim",
        "  at 1.010 s: optim_step submitted 10.0 ms after forward_backward completed in wait_fwd",
        "  on Tinker each can miss a whole clock cycle (about 10 s in the docs): up to 30 s for "
        "these",
        "nothing queued while the client was in: get_batch 100.0 ms, compute_metrics 95.0 ms, "
        "train_step 10.0 ms, wait_fwd 10.0 ms, wait_optim 5.0 ms",  # ties by name
        "stalls: 0, 0.0 ms in all, longest 0.0 ms; GIL-hold dumps: 0",
    ]


def test_pipelined_loop_exits_zero_and_json_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(3, pipelined=True).write(tmp_path / "run")
    code, out, _ = run(capsys, str(log_dir), "--output-format", "json")
    data = json.loads(out)
    assert code == 0 and data["findings"] == 0
    assert data["training"]["max_depth"] == 3 and data["training"]["bubbles"] == []


def test_exit_zero_and_missing_files_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(2).write(tmp_path / "run", anchor=False)
    code, out, _ = run(capsys, str(log_dir), "--exit-zero")
    assert code == 0
    assert out.splitlines()[-3:] == [
        "not computable:",
        "  - capture/train_op.jsonl is on the wall clock and no clock anchor was found "
        "(tinker_lint_runtime.jsonl): bubbles are not placed on the trace's timeline (no "
        "'completed in' span, no idle blame)",
        "  - no tinker_lint_runtime.jsonl: no stalls or GIL holds; run with TINKER_LINT_WATCHDOG=1",
    ]


@pytest.mark.parametrize("make", ["missing", "file", "empty"])
def test_bad_input_exits_two_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str
) -> None:
    target = tmp_path / "logs"
    if make == "file":
        target.write_text("{}\n")
    elif make == "empty":
        target.mkdir()
    code, out, err = run(capsys, str(target))
    assert (code, out) == (2, "")
    expected = {
        "missing": "no such directory",
        "file": "not a directory",
        "empty": "none of the files a training run writes (metrics.jsonl, timing_spans.jsonl, "
        "trace_events.jsonl, capture/train_op.jsonl, capture/sample.jsonl, "
        "tinker_lint_runtime.jsonl)",
    }[make]
    assert err == f"tinker-lint trace: error: {target}: {expected}\n"


def test_no_log_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["trace"])
    assert exited.value.code == 2
    assert "the following arguments are required: LOG_PATH" in capsys.readouterr().err


def test_perfetto_merges_files_and_renumbers_colliding_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = TraceWriter(), TraceWriter()
    first.span("rollout", 0.0, 1.0, track="group_1", tid=5)
    first.span("rollout", 0.5, 1.5, track="group_2", tid=5)  # a tid collision
    second.span("train_step", 10.0, 11.0)  # a resumed process: pid 0 again
    log_dir = tmp_path / "run"
    write_lines(log_dir / "trace_events.jsonl", first.lines() + second.lines())
    runtime = [{"name": "stall", "ph": "X", "pid": 0, "tid": 5, "ts": 5e9 + 2e5, "dur": 3e5}]
    write_lines(log_dir / "tinker_lint_runtime.jsonl", [json.dumps(event) for event in runtime])
    out_file = tmp_path / "merged.json"
    code, _, err = run(capsys, str(log_dir), "--perfetto", str(out_file))
    assert code == 1  # the stall
    events = json.loads(out_file.read_text())
    assert err.endswith(f"wrote {len(events)} events to {out_file}\n")
    groups = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert groups == {
        0: "trace_events.jsonl (process 0, pid 0)",
        1: "trace_events.jsonl (process 1, pid 0)",
        2: "tinker_lint_runtime.jsonl (process 0, pid 0)",
    }
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    # Every track its own (pid, tid); "tid 5" is the runtime file's (its event has no args). The
    # resumed process's first B precedes its metadata: it belongs to the new group, with its E.
    assert sorted(tracks.values()) == ["group_1", "group_2", "main", "tid 5"]
    spans = sorted((e["pid"], e["tid"], e["ph"]) for e in events if e["ph"] in "BE")
    assert len(spans) == 6 and len({(pid, tid) for pid, tid, _ in spans}) == 3


def test_perfetto_without_trace_files_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_lines(tmp_path / "metrics.jsonl", [json.dumps({"step": 0, "time/total": 1.0})])
    code, _, err = run(capsys, str(tmp_path), "--perfetto", str(tmp_path / "out.json"))
    assert code == 2 and "nothing to write to --perfetto" in err


def test_findings_are_printed_with_the_bubbles_after_their_wait(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(2).write(tmp_path / "run", capture=False, recorder=True, wait_file="/p/train.py")
    findings = [
        Diagnostic("train.py", 42, 19, "TNK101", "waits before submitting"),
        Diagnostic("train.py", 45, 5, "TNK104", "blocking .result() in async def"),
    ]
    findings_file = tmp_path / "findings.json"
    findings_file.write_text(json.dumps([to_json(d) for d in findings]))  # the linter's own JSON
    code, out, _ = run(capsys, str(log_dir), "--findings", str(findings_file))
    assert code == 1
    assert out.splitlines()[-3:] == [
        "static findings linked to a measured cost: 2",
        "  TNK101 train.py:42: 2 bubble(s) after this wait; 2 wait(s), 0.610 s blocked; client "
        "turnaround 0.020 s; nothing queued 22% of the training window (evidence: recorded wait "
        "call site)",
        "  TNK104 train.py:45: 1 bubble(s) after this wait; 2 wait(s), 0.190 s blocked; client "
        "turnaround 0.200 s; nothing queued 22% of the training window (evidence: recorded wait "
        "call site)",
    ]
    code, out, _ = run(
        capsys, str(log_dir), "--findings", str(findings_file), "--output-format", "json"
    )
    linked = json.loads(out)["linked"]
    assert [(item["code"], item["row"], item["bubbles"]) for item in linked] == [
        ("TNK101", 42, 2),
        ("TNK104", 45, 1),
    ]


def test_findings_without_recorded_waits_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(2).write(tmp_path / "run")
    findings_file = tmp_path / "findings.json"
    findings_file.write_text("[]")
    code, out, _ = run(capsys, str(log_dir), "--findings", str(findings_file))
    assert code == 1
    assert (
        "  - no recorded wait call sites or watchdog stalls (tinker_lint_runtime.jsonl): "
        "findings are linked only by the cookbook span around their line, if any"
        in out.splitlines()
    )
    assert out.splitlines()[-1] == "static findings linked to a measured cost: 0"


@pytest.mark.parametrize("content", ["{", '{"a": 1}', '[{"code": "TNK101"}]'])
def test_bad_findings_file_exits_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    Loop(1).write(tmp_path / "run")
    findings_file = tmp_path / "findings.json"
    findings_file.write_text(content)
    code, out, err = run(capsys, str(tmp_path / "run"), "--findings", str(findings_file))
    assert (code, out) == (2, "")
    assert err.startswith(f"tinker-lint trace: error: {findings_file}: ")


def test_perfetto_places_capture_requests_on_the_trace_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(2).write(tmp_path / "run")
    out_file = tmp_path / "merged.json"
    run(capsys, str(log_dir), "--perfetto", str(out_file))
    events = json.loads(out_file.read_text())
    groups = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    capture_pid = next(pid for pid, name in groups.items() if name.startswith("capture"))
    requests = [e for e in events if e["pid"] == capture_pid and e["ph"] == "X"]
    assert [(e["name"], round((e["ts"] - TRACE_EPOCH_US) / 1e6, 6)) for e in requests] == [
        ("forward_backward", 0.1),
        ("optim_step", 0.41),
        ("forward_backward", 0.7),
        ("optim_step", 1.01),
    ]
    assert len({e["tid"] for e in requests}) == 4  # each request its own track


def test_github_annotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log_dir = Loop(2).write(tmp_path / "run", capture=False, recorder=True, wait_file="/p/train.py")
    findings_file = tmp_path / "findings.json"
    findings_file.write_text(json.dumps([to_json(Diagnostic("train.py", 42, 1, "TNK101", "m"))]))
    code, out, _ = run(
        capsys, str(log_dir), "--output-format", "github", "--findings", str(findings_file)
    )
    assert code == 1
    assert (
        out.splitlines()
        == [
            "::warning title=tinker-lint trace::3 bubble(s): a training op submitted with none in "
            "flight; nothing queued 220.0 ms of 1.000 s (22.0%25, a lower bound on server idle)",  # % escaped
            "::warning title=tinker-lint trace (TNK101),file=train.py,line=42::TNK101 train.py:42: 2 "
            "bubble(s) after this wait; 2 wait(s), 0.610 s blocked; client turnaround 0.020 s; "
            "nothing queued 22%25 of the training window (evidence: recorded wait call site)",
            # The runtime file is the recorder's alone.
            "::notice title=tinker-lint trace::not computable: no watchdog records in "
            "tinker_lint_runtime.jsonl (the recorder's alone; the watchdog writes a clock_anchor "
            "when it starts): no stalls or GIL holds; run with TINKER_LINT_WATCHDOG=1",
        ]
    )


def test_sarif_is_valid_sarif_2_1_0_with_the_linked_finding_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(2).write(tmp_path / "run", capture=False, recorder=True, wait_file="/p/train.py")
    findings_file = tmp_path / "findings.json"
    findings_file.write_text(json.dumps([to_json(Diagnostic("train.py", 42, 7, "TNK101", "m"))]))
    code, out, _ = run(
        capsys, str(log_dir), "--output-format", "sarif", "--findings", str(findings_file)
    )
    assert code == 1
    document = json.loads(out)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(document)
    (sarif_run,) = document["runs"]
    assert [rule["id"] for rule in sarif_run["tool"]["driver"]["rules"]] == [
        "trace-bubbles",
        "trace-stalls",
        "TNK101",
    ]
    results = sarif_run["results"]
    assert [(r["ruleId"], r["ruleIndex"]) for r in results] == [
        ("trace-bubbles", 0),
        ("TNK101", 2),
    ]
    assert results[0]["properties"]["bubbles"] == 3
    (location,) = results[1]["locations"]
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 42, "startColumn": 7},
    }
    assert results[1]["message"]["text"].startswith("TNK101 train.py:42: 2 bubble(s) after")
    assert (results[1]["properties"]["waits"], results[1]["properties"]["bubbles"]) == (2, 2)


@pytest.mark.parametrize(
    ("flags", "status"),
    [
        ((), 1),  # the serialized 2-step loop has 3 bubbles
        (("--max-bubbles", "2"), 1),
        (("--max-bubbles", "3"), 0),
        (("--max-bubbles", "3", "--max-stalls", "5"), 0),
        (("--exit-zero",), 0),
    ],
)
def test_thresholds_decide_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], status: int
) -> None:
    code, _, _ = run(capsys, str(Loop(2).write(tmp_path / "run", watchdog=True)), *flags)
    assert code == status


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_a_threshold_that_is_not_a_count_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run(capsys, str(Loop(2).write(tmp_path / "run")), "--max-bubbles", value)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --max-bubbles: expected a count (0, 1, 2...), got '{value}'" in err
