"""The results cache never touches anything outside itself, and never trusts what it reads (issue
29, items 2 and 5; docs/safety.md). A repository can commit a ``.tinker_lint_cache`` that is a
symbolic link, or hold one inside it; an entry can be a FIFO, a link to ``/dev/zero``, deeply
nested JSON, or a warning that drives the terminal. Each goes through the real command."""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout import checkout_env
from tests.snippets import WAIT_BEFORE_SUBMIT
from tinker_lint.cli import main
from tinker_lint.run.cache import CACHE_DIR_NAME

ROOT = Path(__file__).parent.parent
LINT = ["--isolated", "--output-format", "concise", "."]
FINDING = "train.py:4:66: TNK101"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "P"
    root.mkdir()
    (root / "train.py").write_text(WAIT_BEFORE_SUBMIT)
    monkeypatch.chdir(root)
    return root


def _listing(root: Path) -> dict[str, tuple]:
    """Everything under ``root`` (without following links): kind, bytes or target, mode, time."""
    found: dict[str, tuple] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            relative = os.path.relpath(path, root)
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                found[relative] = ("file", Path(path).read_bytes(), info.st_mode, info.st_mtime_ns)
            else:
                found[relative] = ("dir", info.st_mode)
    return found


def _elsewhere(tmp_path: Path) -> Path:
    """A directory that looks like a tinker-lint cache, with data that is not the cache's."""
    other = tmp_path / "E"
    (other / "diagnostics-old").mkdir(parents=True)
    (other / "diagnostics-old" / "results.csv").write_text("precious,data\n")
    (other / "diagnostics-v2" / ("0" * 32)).mkdir(parents=True)
    (other / "diagnostics-v2" / ("0" * 32) / ("1" * 64 + ".json")).write_text("{}")
    (other / "diagnostics-v3").mkdir()
    (other / "notes.txt").write_text("mine\n")
    (other / "CACHEDIR.TAG").write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n# a cache directory tag created by tinker-lint.\n"
    )
    return other


def _lint(capsys) -> tuple[int, str, str]:
    code = main(LINT)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_cache_root_that_is_a_symlink_is_refused(project, tmp_path, capsys):
    """``ln -s ../E P/.tinker_lint_cache; cd P; tinker-lint .`` wrote into E and deleted
    ``E/diagnostics-old/`` and ``E/diagnostics-v2/``; ``tinker-lint clean`` removed E."""
    other = _elsewhere(tmp_path)
    before = _listing(other)
    (project / CACHE_DIR_NAME).symlink_to(os.path.join("..", "E"))
    runs = [_lint(capsys) for _ in range(2)]  # the second would read what the first wrote
    assert _listing(other) == before
    for code, out, err in runs:
        assert code == 1 and out.startswith(FINDING)
        assert (
            f"tinker-lint: warning: {project / CACHE_DIR_NAME}: the results cache is not used: "
            "it is a symbolic link (the cache never follows one)\n"
        ) in err
    assert main(["clean"]) == 0
    captured = capsys.readouterr()
    assert f"{project / CACHE_DIR_NAME}: not removed: it is a symbolic link" in captured.err
    assert "Removed" not in captured.out
    assert _listing(other) == before
    assert (project / CACHE_DIR_NAME).is_symlink()


def test_a_directory_inside_the_cache_that_is_a_symlink_is_refused(project, tmp_path, capsys):
    """A real ``.tinker_lint_cache`` holding links: the format's directory and an old format's."""
    other = _elsewhere(tmp_path)
    before = _listing(other)
    cache = project / CACHE_DIR_NAME
    cache.mkdir()
    (cache / "diagnostics-v3").symlink_to(other / "diagnostics-v3")
    (cache / "diagnostics-old").symlink_to(other / "diagnostics-old")
    code, out, err = _lint(capsys)
    assert _listing(other) == before
    assert code == 1 and out.startswith(FINDING)
    assert f"{cache / 'diagnostics-v3'}: the results cache is not used: it is a symbolic link" in (
        err
    )
    assert (cache / "diagnostics-old").is_symlink()


def _fill(capsys) -> tuple[str, list[Path]]:
    """Lint once through the cache: the report, and the entries written (one: train.py's)."""
    code, out, _ = _lint(capsys)
    assert code == 1 and out.startswith(FINDING)
    entries = sorted(Path(CACHE_DIR_NAME).glob("diagnostics-v3/*/*.json"))
    assert len(entries) == 1
    return out, entries


def test_an_entry_that_is_a_symlink_is_not_read(project, tmp_path, capsys):
    out, [entry] = _fill(capsys)
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({"diagnostics": [], "warnings": ["planted"]}))
    entry.unlink()
    entry.symlink_to(planted)
    content = planted.read_bytes()
    code, again, err = _lint(capsys)
    assert (code, again) == (1, out)
    assert "planted" not in err
    assert planted.read_bytes() == content


def _command(argv: list[str] = LINT, timeout: float = 30) -> subprocess.CompletedProcess:
    """``python -m tinker_lint`` here, with at most 2 GB of memory (a base that read
    ``/dev/zero`` into memory fails fast rather than taking the machine's)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = checkout_env()
    return subprocess.run(
        [sys.executable, "-m", "tinker_lint", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        preexec_fn=limit,
        check=False,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_an_entry_that_is_a_fifo_is_a_miss(project, capsys):
    out, [entry] = _fill(capsys)
    entry.unlink()
    os.mkfifo(entry)
    done = _command()  # the base waited for a writer for ever
    assert (done.returncode, done.stdout) == (1, out)
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_an_entry_that_links_to_an_endless_device_is_a_miss(project, capsys):
    out, [entry] = _fill(capsys)
    entry.unlink()
    entry.symlink_to("/dev/zero")
    done = _command()  # the base read it until killed (24 GB)
    assert (done.returncode, done.stdout) == (1, out)
    assert "Traceback" not in done.stderr and "error" not in done.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_an_entry_whose_dependency_is_an_endless_device_is_a_miss(project, capsys):
    """An entry names the project files its findings came from, and their SHA-256: a file it
    names is read only if it is a regular file of a reasonable size."""
    out, [entry] = _fill(capsys)
    stored = json.loads(entry.read_text())
    stored["depends"] = {"/dev/zero": "0" * 64}
    entry.write_text(json.dumps(stored))
    done = _command()
    assert (done.returncode, done.stdout) == (1, out)
    assert "Traceback" not in done.stderr and "error" not in done.stderr


def test_a_deeply_nested_entry_is_a_miss(project, capsys):
    out, [entry] = _fill(capsys)
    entry.write_text('{"diagnostics": ' + "[" * 200_000 + "]" * 200_000 + ', "warnings": []}')
    code, again, err = _lint(capsys)  # the base: an internal error on every run until `clean`
    assert (code, again) == (1, out)
    assert "error" not in err
    code, again, _ = _lint(capsys)  # rewritten
    assert (code, again) == (1, out)


@pytest.mark.parametrize(
    "field",
    [
        {"line": "4"},  # a string where a number belongs: sorting the report would fail
        {"line": True},
        {"message": "a\x1b[2Jb"},  # a finding that would drive the terminal
        {"file_range": [1, 2]},
        {"fix": {"message": "m", "edits": [{"content": 1}], "applicability": "safe"}},
        {"extra": 1},
    ],
)
def test_an_entry_of_the_wrong_shape_is_a_miss(project, capsys, field):
    out, [entry] = _fill(capsys)
    stored = json.loads(entry.read_text())
    stored["diagnostics"][0].update(field)
    entry.write_text(json.dumps(stored))
    code, again, err = _lint(capsys)
    assert (code, again, err) == (1, out, "")


def test_a_stored_warning_is_printed_escaped(project, capsys):
    out, [entry] = _fill(capsys)
    stored = json.loads(entry.read_text())
    stored["warnings"] = ["train.py:1: \x1b[2J\x1b]0;owned\x07\rfake\x9b31m\u202eend"]
    entry.write_text(json.dumps(stored))
    code, again, err = _lint(capsys)
    assert (code, again) == (1, out)
    assert err == (
        "tinker-lint: warning: train.py:1: \\x1b[2J\\x1b]0;owned\\x07\\rfake\\x9b31m\\u202eend\n"
    )


def test_a_warning_about_a_hostile_file_name_is_printed_escaped(project, capsys):
    (project / "a\x1b[31m.py").write_text("x = 1  # noqa: TNK999\n")
    main([*LINT[:-1], "--no-cache", "."])
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "a\\x1b[31m.py:1: unknown rule code `TNK999`" in err


@pytest.mark.skipif(getattr(os, "getuid", lambda: -1)() != 0, reason="chown needs root")
def test_a_cache_of_another_user_is_refused(project, tmp_path, capsys):
    """A cache directory someone else made where this one would be (``--cache-dir`` in a shared
    ``/tmp``) is not used: neither read, written nor pruned."""
    other = tmp_path / "shared"
    other.mkdir()
    (other / "diagnostics-old").mkdir()
    os.chown(other, 12345, 12345)
    before = _listing(other)
    code = main(["--cache-dir", str(other), *LINT])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{other}: the results cache is not used: it is owned by another user (uid 12345)" in err
    assert _listing(other) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_clean_reads_no_fifo_for_a_tag(project):
    """``tinker-lint clean`` reads the cache's tag as an entry is read: a FIFO is no tag."""
    cache = project / CACHE_DIR_NAME
    cache.mkdir()
    os.mkfifo(cache / "CACHEDIR.TAG")
    done = _command(["clean"])
    assert (done.returncode, done.stdout) == (0, f"No cache at {cache}\n")
    assert (cache / "CACHEDIR.TAG").exists()


def test_printable_escapes_only_what_drives_a_terminal():
    from tinker_lint.io.terminal import printable

    kept = "C:\\work\\données\\模型.py:3: `x`\u00a0é"
    assert printable(kept) == kept
    assert printable("a\x00\x1b\x7f\x85\x9b\t\n\r\udcff\u202e\u2066b") == (
        "a\\x00\\x1b\\x7f\\x85\\x9b\\t\\n\\r\\udcff\\u202e\\u2066b"
    )


def test_pruning_neither_follows_nor_removes_a_link(project, tmp_path, capsys, monkeypatch):
    """Links where pruning looks (an old format's directory, a stale linter's directory, an
    unused entry, a stale temporary file) are left as they are, and so is what they point to.
    (A guard: the base removed the entry's link, not its target.)"""
    from tinker_lint.run import cache as cache_module

    other = _elsewhere(tmp_path)
    (other / "entry.json").write_text("{}")
    _fill(capsys)
    cache = project / CACHE_DIR_NAME
    [fingerprint] = (cache / "diagnostics-v3").iterdir()
    links = {
        cache / "diagnostics-old": other / "diagnostics-old",
        cache / "diagnostics-v3" / ("f" * 32): other / "diagnostics-v2" / ("0" * 32),
        fingerprint / ("e" * 64 + ".json"): other / "entry.json",
        fingerprint / ("e" * 64 + ".json.1.tmp"): other / "notes.txt",
    }
    for link, target in links.items():
        link.symlink_to(target)
        os.utime(link, (1_000, 1_000), follow_symlinks=False)
    made = [cache / "diagnostics-v1", cache / "diagnostics-v3" / ("a" * 32)]  # the cache's own
    for directory in made:
        directory.mkdir()
    (fingerprint / "x.json.2.tmp").write_text("{")
    os.utime(fingerprint / "x.json.2.tmp", (1_000, 1_000))
    before = _listing(other)
    monkeypatch.setattr(cache_module, "KEEP_FINGERPRINTS", 0)
    monkeypatch.setattr(cache_module, "MAX_ENTRIES", 0)
    (project / "train.py").write_text(WAIT_BEFORE_SUBMIT + "\n")  # the run writes, so prunes
    code, _, err = _lint(capsys)
    assert (code, err) == (1, "")
    assert _listing(other) == before
    assert all(link.is_symlink() for link in links)
    assert not any(p.exists() for p in [*made, fingerprint / "x.json.2.tmp"])  # pruning ran
