"""Whatever a repository holds, ``tinker-lint`` gives a diagnostic or skips with a reason: never a
traceback, never a crash, never a hang; exit codes 0 (clean), 1 (findings), 2 (usage/config).

Each test runs the real command in a fresh process (a segmentation fault would show as a negative
return code there, not kill the test run)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from tests.robustness_support import ROOT, cli, no_traceback, sample, without_read_permission
from tinker_lint.io.config import default_settings
from tinker_lint.run.engine import MAX_ANALYSED_CHARS, lint_bytes, lint_text

SETTINGS = default_settings()
CODE, FOUND = sample()  # TNK104's example and its finding, [(2, 82, "TNK104")]


def shifted(by: int) -> list[tuple[int, int, str]]:
    return [(line + by, col, code) for line, col, code in FOUND]


def one_file(tmp_path, name: str, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    run = cli(path)
    no_traceback(run)
    return run


# --- what CPython rejects: TNK001 where CPython says -------------------------------------------
REJECTED = {
    "syntax.py": (b"def f(:\n", (1, 7), "SyntaxError: invalid syntax"),
    "indent.py": (b"x = 1\n  y = 2\n", (2, 2), "IndentationError: unexpected indent"),
    "python2.py": (b'print "hi"\n', (1, 1), "SyntaxError: Missing parentheses in call to 'print'"),
    "octal.py": (b"x = 0777\n", (1, 5), "SyntaxError: leading zeros in decimal integer literals"),
    "null_byte.py": (b"x = 1\x00\n", (1, 6), "The file contains a null byte"),
    "latin1_no_cookie.py": (
        b'name = "caf\xe9"\n',
        (1, 12),
        "Cannot decode file: not valid utf-8 (byte 0xE9)",
    ),
    "bad_utf8_line2.py": (
        b'x = 1\ny = "\xff"\n',
        (2, 6),
        "Cannot decode file: not valid utf-8 (byte 0xFF)",
    ),
    "unknown_cookie.py": (b"# coding: uft-8\nx = 1\n", (1, 1), "names an unknown encoding: uft-8"),
    "bom_and_cookie.py": (
        b"\xef\xbb\xbf# coding: latin-1\nx = 1\n",
        (1, 1),
        "starts with a UTF-8 BOM but its coding cookie names another encoding",
    ),
}


@pytest.mark.slow
def test_rejected_source_is_one_tnk001_each(tmp_path):
    for name, (content, _, _) in REJECTED.items():
        (tmp_path / name).write_bytes(content)
    run = cli(tmp_path)
    no_traceback(run)
    assert run.diagnostics() == sorted(
        (name, *where, "TNK001") for name, (_, where, _) in REJECTED.items()
    )
    messages = dict(zip([d[0] for d in run.diagnostics()], run.messages("TNK001"), strict=True))
    for name, (_, _, message) in REJECTED.items():
        assert message in messages[name], (name, messages[name])
    assert run.returncode == 1


@pytest.mark.slow
def test_python2_file_with_tinker_calls_is_a_syntax_error_not_analysed(tmp_path):
    source = b'import tinker\nprint "step"\ntc.forward_backward(batch, "cross_entropy").result()\n'
    run = one_file(tmp_path, "legacy.py", source)
    assert run.diagnostics() == [("legacy.py", 2, 1, "TNK001")]


# --- encodings and line ends: decoded as Python does, positions as an editor shows them ---------
ANALYSED = {
    "lf.py": (CODE.encode(), FOUND),
    "bom.py": (b"\xef\xbb\xbf" + CODE.encode(), FOUND),
    "crlf.py": (CODE.replace("\n", "\r\n").encode(), FOUND),
    "cr.py": (CODE.replace("\n", "\r").encode(), FOUND),
    "latin1.py": (("# -*- coding: latin-1 -*-\n# caf\xe9\n" + CODE).encode("latin-1"), shifted(2)),
    "formfeed.py": (("\x0c\n# section\x0c\n" + CODE).encode(), shifted(2)),
    "tabs.py": (CODE.replace("    ", "\t").encode(), [(2, 79, "TNK104")]),  # a tab is one column
}  # fmt: skip


@pytest.mark.slow
def test_encodings_and_line_ends_are_analysed(tmp_path):
    for name, (content, _) in ANALYSED.items():
        (tmp_path / name).write_bytes(content)
    run = cli(tmp_path)
    no_traceback(run)
    assert run.diagnostics() == sorted(
        (name, *where) for name, (_, expected) in ANALYSED.items() for where in expected
    )
    assert run.returncode == 1


@pytest.mark.slow
def test_noqa_after_a_form_feed_is_on_the_right_line(tmp_path):
    """``str.splitlines`` splits at form feeds, Python does not: the noqa must still match."""
    line, _, code = FOUND[0]
    lines = CODE.splitlines()
    lines[line - 1] += f"  # noqa: {code}"
    run = one_file(tmp_path, "ff.py", ("x = 1\x0c\n" + "\n".join(lines) + "\n").encode())
    assert run.diagnostics() == []
    assert run.returncode == 0


def test_latin1_cookie_keeps_the_text_as_written():
    raw = "# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1")
    result = lint_bytes(raw, "x.py", SETTINGS)
    assert result.diagnostics == []
    assert result.source is not None and "café" in result.source.text


# --- size and depth ---------------------------------------------------------------------------
def _generated(size: int, tail: str = "") -> bytes:
    # A wait before a submit: no pre-filter rules the file out, so it reaches libcst.
    line = (
        "def step_{i}(tc, batch):\n    tc.forward_backward(batch, 'cross_entropy').result()\n"
        "    return tc.optim_step(adam)\n\n"
    )
    parts, total, i = [], 0, 0
    while total < size:
        part = line.format(i=i)
        parts.append(part)
        total += len(part)
        i += 1
    return ("".join(parts) + tail).encode()


@pytest.mark.slow
def test_five_megabyte_generated_files(tmp_path):
    """5 MB is checked for syntax, not analysed (that would take minutes); a syntax error on the
    last line of a large file is reported there."""
    (tmp_path / "generated.py").write_bytes(_generated(5 * 1024 * 1024))
    broken = _generated(1024 * 1024, tail="def broken(:\n")
    (tmp_path / "generated_broken.py").write_bytes(broken)
    started = time.monotonic()
    run = cli(tmp_path)
    elapsed = time.monotonic() - started
    no_traceback(run)
    # The file not analysed is a finding (TNK003, issue 13): not a silent pass.
    assert run.diagnostics() == [
        ("generated.py", 1, 1, "TNK003"),
        ("generated_broken.py", broken.count(b"\n"), 12, "TNK001"),
    ]
    assert run.returncode == 1
    assert "generated.py:1:1: TNK003 Not analysed: 5," in run.stdout
    assert f"more than the {MAX_ANALYSED_CHARS:,}" in run.stdout
    assert elapsed < 60, elapsed  # seconds: the syntax check only


HEADER = "import tinker\nsc = tinker.ServiceClient()\n"  # so the pre-filter lets the file through


NESTED = {
    # CPython refuses more than 200 nested brackets and 100 indents: so do we, before libcst
    # (whose native parser crashed the process at about 1,500 nested brackets).
    "parens.py": (HEADER + "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n", (3, 205),
                  "SyntaxError: too many nested parentheses"),
    "lists.py": (HEADER + "x = " + "[" * 1500 + "]" * 1500 + "\n", (3, 205),
                 "SyntaxError: too many nested parentheses"),
    "indent.py": (HEADER + "".join(" " * i + "if a:\n" for i in range(1000)) + " " * 1000
                  + "pass\n", (103, 1), "IndentationError: too many levels of indentation"),
    # Deeper than CPython's own compiler goes (it raises RecursionError or MemoryError).
    "attributes.py": (HEADER + "x = a" + ".b" * 5000 + "\n", (1, 1),
                      "Nested too deeply for Python to compile"),
    "elif.py": (HEADER + "if a: pass\n" + "elif a: pass\n" * 20000, (1, 1),
                "Too complex for Python's parser"),
}  # fmt: skip


@pytest.mark.slow
def test_nesting_cpython_refuses_is_tnk001(tmp_path):
    for name, (source, _, _) in NESTED.items():
        (tmp_path / name).write_text(source)
    run = cli(tmp_path)
    no_traceback(run)
    assert run.diagnostics() == sorted(
        (name, *where, "TNK001") for name, (_, where, _) in NESTED.items()
    )
    messages = dict(zip([d[0] for d in run.diagnostics()], run.messages("TNK001"), strict=True))
    for name, (_, _, message) in NESTED.items():
        assert message in messages[name], (name, messages[name])
    assert run.returncode == 1


@pytest.mark.slow
def test_thousand_deep_expression_is_analysed(tmp_path):
    """1,000 levels that CPython accepts are analysed (a thread with a large stack): the waits at
    both ends of a 1,000-term sum are found."""
    terms = " + ".join(["y"] * 1000)
    source = (
        "async def rollout(sampling_client, prompt, params):\n"
        f"    return {terms} + sampling_client.sample(prompt, 1, params).result()\n"
    )
    run = one_file(tmp_path, "deep.py", source.encode())
    col = len(f"    return {terms} + sampling_client.sample(prompt, 1, params).") + 1
    assert run.diagnostics() == [("deep.py", 2, col, "TNK104")]


@pytest.mark.slow
def test_chain_deep_only_for_libcst_is_analysed_without_a_crash(tmp_path):
    """10,000 ``or``: flat for CPython, 10,000 levels for libcst (a segmentation fault on the main
    thread before). Valid Python: analysed on the deep-stack thread, no finding, no traceback."""
    # A request call too, so that the pre-filter sends the file to the analysis.
    source = HEADER + "sc.create_lora_training_client(base_model='m')\n"
    source += "x = " + " or ".join(["a"] * 10000) + "\n"
    run = one_file(tmp_path, "chain.py", source.encode())
    no_traceback(run)
    assert run.diagnostics() == []
    assert run.returncode == 0
    assert "not analysed" not in run.stderr


# --- the file system ----------------------------------------------------------------------------
@pytest.mark.slow
def test_symlink_loops_dangling_links_and_fifos_are_skipped(tmp_path):
    (tmp_path / "good.py").write_text(CODE)
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.symlink("missing.py", tmp_path / "dangling.py")
    os.symlink(".", tmp_path / "dir_loop")  # a directory symlink: never followed
    os.mkfifo(tmp_path / "pipe.py")  # opening it for reading would wait forever for a writer
    run = cli(tmp_path, timeout=60)
    no_traceback(run)
    assert run.diagnostics() == [("good.py", *where) for where in FOUND]
    assert run.returncode == 1
    warnings = sorted(line for line in run.stderr.splitlines() if "skipped" in line)
    assert [w.split(": skipped: ")[1] for w in warnings] == [
        "broken symbolic link (its target is missing, or a loop)",
        "broken symbolic link (its target is missing, or a loop)",
        "broken symbolic link (its target is missing, or a loop)",
        "not a regular file (a FIFO, socket or device is never read)",
    ]
    assert "Found 1 error in 1 file checked." in run.stdout


def test_symlink_to_a_device_is_not_read(tmp_path):
    """``/dev/zero`` never ends: reading it would exhaust memory."""
    os.symlink("/dev/zero", tmp_path / "zero.py")
    run = cli(tmp_path, timeout=60)
    no_traceback(run)
    assert run.returncode == 0
    assert "zero.py: skipped: not a regular file" in run.stderr


@pytest.mark.slow
def test_unreadable_file_is_tnk002_and_the_run_goes_on(tmp_path):
    prefix = without_read_permission()
    if prefix is None:
        pytest.skip("running as root without setpriv: cannot make a file unreadable")
    (tmp_path / "good.py").write_text(CODE)
    secret = tmp_path / "secret.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    try:
        run = cli(tmp_path, prefix=prefix)
    finally:
        secret.chmod(stat.S_IRUSR | stat.S_IWUSR)
    no_traceback(run)
    assert sorted(run.diagnostics()) == sorted(
        [("good.py", *where) for where in FOUND] + [("secret.py", 1, 1, "TNK002")]
    )
    assert run.messages("TNK002") == ["Cannot read file: Permission denied"]
    assert run.returncode == 1


@pytest.mark.slow
def test_unreadable_directory_is_skipped_with_a_reason(tmp_path):
    prefix = without_read_permission()
    if prefix is None:
        pytest.skip("running as root without setpriv: cannot make a directory unreadable")
    (tmp_path / "good.py").write_text(CODE)
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "inside.py").write_text(CODE)
    closed.chmod(0)
    try:
        run = cli(tmp_path, prefix=prefix)
        top = cli(closed, prefix=prefix)  # named on the command line itself
    finally:
        closed.chmod(stat.S_IRWXU)
    no_traceback(run)
    assert run.diagnostics() == [("good.py", *where) for where in FOUND]
    assert f"{closed}: skipped: directory is not readable" in run.stderr
    no_traceback(top)
    assert f"{closed}: skipped: cannot list directory: Permission denied" in top.stderr
    # Nothing named could be checked: a usage error (issue 13), not "All checks passed!".
    assert f"tinker-lint: error: nothing was checked: {closed} cannot be read" in top.stderr
    assert top.returncode == 2


def test_file_that_vanishes_is_tnk002(tmp_path, monkeypatch):
    """Discovered, then gone before it is read (a build step deleting it): TNK002, no traceback."""
    import tinker_lint.run.runner as runner

    (tmp_path / "a.py").write_text(CODE)
    (tmp_path / "b.py").write_text(CODE)
    discover = runner.discover

    def discover_then_delete(*args, **kwargs):
        for item in discover(*args, **kwargs):
            if isinstance(item, str) and item.endswith("a.py"):
                os.remove(item)
            yield item

    monkeypatch.setattr(runner, "discover", discover_then_delete)
    diagnostics, files, _ = runner.lint_paths([str(tmp_path)], SETTINGS)
    assert [(os.path.basename(d.path), d.line, d.col, d.code) for d in diagnostics] == [
        ("a.py", 1, 1, "TNK002"),
        *[("b.py", *where) for where in FOUND],
    ]
    assert diagnostics[0].message == "Cannot read file: No such file or directory"
    assert files == 2


@pytest.mark.slow
def test_paths_with_spaces_and_non_ascii_names(tmp_path):
    folder = tmp_path / "my project ñ"
    folder.mkdir()
    (folder / "entraînement v2.py").write_text(CODE)
    (folder / "訓練.py").write_text(CODE)
    undecodable = os.fsencode(folder) + b"/bad\xffname.py"  # not UTF-8: a surrogate in Python
    with open(undecodable, "w") as handle:
        handle.write(CODE)
    for env in ({}, {"PYTHONIOENCODING": "ascii"}):
        run = cli(folder, env=env)
        no_traceback(run)
        assert run.returncode == 1
        names = sorted(name for name, *_ in run.diagnostics())
        assert len(names) == 3
    run = cli(folder)
    assert f"{folder}/entraînement v2.py:2:82: TNK104" in run.stdout
    assert f"{folder}/訓練.py:2:82: TNK104" in run.stdout
    assert f"{folder}/bad\\udcffname.py:2:82: TNK104" in run.stdout


@pytest.mark.slow
def test_broken_pipe_ends_quietly(tmp_path):
    """``tinker-lint . | head -1``: the reader goes away; no traceback on stderr."""
    long = "x" * 200
    for i in range(400):
        (tmp_path / f"{long}_{i}.py").write_text("def f(:\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "tinker_lint", "--isolated", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    code = process.wait(timeout=120)
    assert b"TNK001" in first
    assert stderr == ""
    assert code == 1


# --- exit codes --------------------------------------------------------------------------------
@pytest.mark.slow
def test_exit_codes(tmp_path):
    (tmp_path / "clean.py").write_text("x = 1\n")
    (tmp_path / "found.py").write_text(CODE)
    assert cli(tmp_path / "clean.py").returncode == 0
    assert cli(tmp_path / "found.py").returncode == 1
    assert cli(tmp_path / "found.py", "--exit-zero").returncode == 0
    missing = cli(tmp_path / "nope.py")
    assert missing.returncode == 2
    assert "nope.py: skipped: no such file or directory" in missing.stderr
    unknown = cli(tmp_path, "--frobnicate")
    assert unknown.returncode == 2
    assert "unrecognized arguments: --frobnicate" in unknown.stderr
    for run in (missing, unknown):
        no_traceback(run)


def test_engine_never_raises_on_odd_text():
    odd = [
        "",
        "\n\n\n",
        "\ufeff",
        "\x0c",
        "\r",
        "#" * 10000,
        "'''" + "x" * 10000,
        "x = '\\N{no such name}'\n",
        "f'{'\n",
        "\\\n",
        "if True:\n\tpass\n        pass\n",
        "€ = 1\n",
        "x = 1 if 2 else\n",
        "async def f():\n    await = 1\n",
        "match = case = 1\nmatch x:\n    case _:\n        pass\n",
        "type X = int\n",
        "def f[T](x: T) -> T: ...\n",
    ]
    for text in odd:
        result = lint_text(text, "odd.py", SETTINGS, prefilter=False)
        assert all(d.code != "TNK000" for d in result.diagnostics), (text, result.diagnostics)


@pytest.mark.slow
def test_interrupt_is_exit_130_without_traceback(tmp_path):
    """Ctrl-C in the middle of an analysis (the analysis thread is inside libcst's native parser:
    letting the interpreter finalize under it aborted the process with SIGABRT)."""
    for i in range(10):
        (tmp_path / f"big_{i}.py").write_bytes(_generated(400_000))
    process = subprocess.Popen(
        [sys.executable, "-m", "tinker_lint", "--isolated", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        # As a terminal starts it: Ctrl-C at its default. A suite started in the background (a
        # shell's `&` ignores SIGINT) passes the ignored signal on across exec: Python then installs
        # no handler, and the run went on to its end.
        preexec_fn=_default_sigint,
    )
    _wait_for_analysis_thread(process.pid)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert (process.returncode, out, err) == (130, b"", b"tinker-lint: interrupted\n")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_analysis_thread(pid: int) -> None:
    """Until the process runs a second thread (the analysis: each file takes seconds), so the
    interrupt lands inside an analysis, not in the imports."""
    tasks = f"/proc/{pid}/task"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(os.listdir(tasks)) >= 2:
                time.sleep(0.5)
                return
        except FileNotFoundError:  # not Linux, or the process is gone
            break
        time.sleep(0.05)
    time.sleep(3)
