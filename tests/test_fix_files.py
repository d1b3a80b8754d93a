"""Writing fixed files: encoding, BOM, line endings and permissions kept; atomic writes; files that
cannot be read or written get a clear message and the run goes on."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from tinker_lint import cli
from tinker_lint.fix import write as write_module
from tinker_lint.fix.write import WriteError, write_atomic

BEFORE = textwrap.dedent(
    """\
    # -*- coding: {encoding} -*-
    # café
    import tinker

    tc = tinker.ServiceClient().create_lora_training_client(base_model="m")
    tc.forward_backward(batch, loss_fn="cross_entropy")
    """
)
AFTER = BEFORE.replace('base_model="m")', 'base_model="m").result()')


def _run(*argv: str) -> int:
    return cli.main(["--isolated", "--tinker-version", "0.38", *argv])


@pytest.mark.parametrize(
    ("encoding", "newline", "bom"),
    [
        ("utf-8", "\n", b""),
        ("utf-8", "\r\n", b""),
        ("utf-8", "\n", b"\xef\xbb\xbf"),
        ("utf-8", "\r\n", b"\xef\xbb\xbf"),
        ("latin-1", "\n", b""),
        ("latin-1", "\r\n", b""),
    ],
)
def test_fix_keeps_encoding_bom_line_endings_and_mode(tmp_path, capsys, encoding, newline, bom):
    path = tmp_path / "train.py"
    before = bom + BEFORE.format(encoding=encoding).replace("\n", newline).encode(encoding)
    path.write_bytes(before)
    path.chmod(0o751)
    assert _run("--fix", str(path)) == 0
    after = bom + AFTER.format(encoding=encoding).replace("\n", newline).encode(encoding)
    assert path.read_bytes() == after
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert "Found 1 error (1 fixed, 0 remaining)" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_mixed_line_endings_are_kept_line_by_line(tmp_path):
    path = tmp_path / "train.py"
    text = BEFORE.format(encoding="utf-8")
    lines = text.split("\n")
    mixed = "\r\n".join(lines[:3]) + "\r\n" + "\n".join(lines[3:])
    path.write_bytes(mixed.encode())
    assert _run("--fix", str(path)) == 0
    fixed = AFTER.format(encoding="utf-8").split("\n")
    assert path.read_bytes() == ("\r\n".join(fixed[:3]) + "\r\n" + "\n".join(fixed[3:])).encode()


def test_symlink_stays_a_link_and_its_target_is_fixed(tmp_path):
    target = tmp_path / "real.py"
    target.write_text(BEFORE.format(encoding="utf-8"))
    link = tmp_path / "link.py"
    link.symlink_to(target.name)
    write_atomic(str(link), b"new\n")
    assert link.is_symlink()
    assert target.read_bytes() == b"new\n"


def test_read_only_file_gets_a_message_and_the_run_goes_on(tmp_path, capsys):
    locked, free = tmp_path / "a_locked.py", tmp_path / "b_free.py"
    for path in (locked, free):
        path.write_text(BEFORE.format(encoding="utf-8"))
    locked.chmod(0o444)
    assert _run("--fix", str(tmp_path)) == 1  # the read-only file's finding remains
    out, err = capsys.readouterr()
    assert f"{locked}: cannot write: the file is read-only" in err
    assert locked.read_text() == BEFORE.format(encoding="utf-8")
    assert free.read_text() == AFTER.format(encoding="utf-8")
    assert f"{locked}:5:6: TNK106 [*]" in out
    assert "Found 2 errors (1 fixed, 1 remaining)" in out


def test_unreadable_file_gets_a_message_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    unreadable, free = tmp_path / "a.py", tmp_path / "b.py"
    for path in (unreadable, free):
        path.write_text(BEFORE.format(encoding="utf-8"))
    real_open = os.open

    def deny(file, *args, **kwargs):  # root reads any file: refuse this one as the OS would
        if str(file) == str(unreadable):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("tinker_lint.io.files.os.open", deny)
    # An unreadable file is a finding (TNK002, as ruff's E902), and the other file is still fixed.
    assert _run("--fix", str(tmp_path)) == 1
    assert (
        f"{unreadable}:1:1: TNK002 Cannot read file: Permission denied" in capsys.readouterr().out
    )
    assert free.read_text() == AFTER.format(encoding="utf-8")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_by_mode(tmp_path, capsys):
    path = tmp_path / "a.py"
    path.write_text(BEFORE.format(encoding="utf-8"))
    path.chmod(0)
    assert _run("--fix", str(path)) == 1
    assert "TNK002 Cannot read file" in capsys.readouterr().out


def test_undecodable_file_is_reported_not_written(tmp_path, capsys):
    path = tmp_path / "a.py"
    path.write_bytes(b"# -*- coding: utf-8 -*-\nx = '\xff'\n")
    assert _run("--fix", str(path)) == 1
    assert path.read_bytes() == b"# -*- coding: utf-8 -*-\nx = '\xff'\n"
    assert "TNK001" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------
# Atomic writes
# ------------------------------------------------------------------------------------------
@pytest.fixture
def original(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"original\n")
    return path


def test_failed_rename_leaves_the_original_and_no_temporary_file(original, monkeypatch):
    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write_module.os, "replace", fail)
    with pytest.raises(WriteError, match="No space left on device"):
        write_atomic(str(original), b"new\n" * 1000)
    assert original.read_bytes() == b"original\n"
    assert [p.name for p in original.parent.iterdir()] == ["train.py"]


def test_interrupt_midway_leaves_the_original_and_no_temporary_file(original, monkeypatch):
    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(write_module.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(original), b"new\n" * 1000)
    assert original.read_bytes() == b"original\n"
    assert [p.name for p in original.parent.iterdir()] == ["train.py"]


def test_process_killed_midway_leaves_the_original(original):
    # A real interruption: the process dies (SIGKILL, no clean-up) after writing the new bytes to
    # the temporary file and before the rename.
    script = textwrap.dedent(
        f"""
        import os, signal
        from tinker_lint.fix import write
        write.os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)
        write.write_atomic({str(original)!r}, b"new\\n" * 100000)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    done = subprocess.run([sys.executable, "-c", script], env=env, check=False)
    assert done.returncode == -signal.SIGKILL
    assert original.read_bytes() == b"original\n"
    leftovers = [p.name for p in original.parent.iterdir() if p.name != "train.py"]
    assert all(name.startswith(".train.py.") for name in leftovers)  # never the file itself


def test_file_changed_while_being_fixed_is_not_overwritten(original):
    with pytest.raises(WriteError, match="changed on disk"):
        write_atomic(str(original), b"new\n", expected=b"what we read before\n")
    assert original.read_bytes() == b"original\n"
    assert [p.name for p in original.parent.iterdir()] == ["train.py"]


def test_hard_linked_file_is_not_split(original):
    os.link(original, original.parent / "other.py")
    with pytest.raises(WriteError, match="hard links"):
        write_atomic(str(original), b"new\n")
    assert original.read_bytes() == b"original\n"


def test_read_only_directory(tmp_path, original, monkeypatch):
    def no_temp(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(write_module.tempfile, "mkstemp", no_temp)
    with pytest.raises(WriteError, match="cannot write to its directory: Permission denied"):
        write_atomic(str(original), b"new\n")
    assert original.read_bytes() == b"original\n"
