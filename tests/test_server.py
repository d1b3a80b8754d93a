"""``tinker-lint server``, driven as an editor drives it: the real server in a subprocess, spoken
to over stdio in JSON-RPC (``tests/lsp_client.py``). One server for the module's tests (each on
files of its own in one project); the few that need a server of their own (pull diagnostics, the
way it exits) start one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp_client import LspClient, apply_edits, uri
from tests.tinker_programs import HELPER_LOOP as LOOP
from tests.tinker_programs import HELPER_SUBMITS as STEPS_SUBMITS
from tests.tinker_programs import HELPER_WAITS as STEPS_WAITS

pytest.importorskip("pygls")

PYPROJECT = (
    '[project]\nname = "served"\nversion = "0"\n\n[tool.tinker-lint]\ntinker-version = "0.38.0"\n'
)

# TNK105 (a safe fix) on a line whose text before it has an emoji (two UTF-16 units, one code
# point) and an accented letter; TNK101 (a safe fix) in the loop below.
FIXME = """\
async def step(training_client, batch):
    note = "🙂é"; fut = await training_client.forward_backward_async(batch, loss_fn="cross_entropy")
    return await fut


def train(training_client, batches, adam):
    for batch in batches:
        result = training_client.forward_backward(batch, loss_fn="cross_entropy").result()
        training_client.optim_step(adam)
        print(result.loss)
"""
TNK105_MESSAGE = "`forward_backward_async()` is deprecated: use `forward_backward()`"
TNK101_MESSAGE = (
    "Waiting for `forward_backward` before submitting `optim_step`, which does not need it"
)
FIXED_TNK105_LINE = (
    '    note = "🙂é"; fut = training_client.forward_backward(batch, loss_fn="cross_entropy")\n'
)
FIXED_TNK101_LINES = (
    '        result_future = training_client.forward_backward(batch, loss_fn="cross_entropy")\n'
    "        training_client.optim_step(adam)\n"
    "        result = result_future.result()\n"
)

# The wait sits in a ``try`` whose handler skips the step: TNK101's fix is unsafe there.
GUARDED = """\
def train(training_client, batches, adam):
    for batch in batches:
        try:
            result = training_client.forward_backward(batch, loss_fn="cross_entropy").result()
            training_client.optim_step(adam)
        except ValueError:
            continue
        print(result.loss)
"""

# A loop that names no Tinker call of its own: whether it waits is its helper's to say.


def _range(line: int, start: int, end_line: int, end: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": start},
        "end": {"line": end_line, "character": end},
    }


def _href(code: str) -> str:
    return f"https://github.com/tinker-lint/tinker-lint/blob/main/docs/rules/{code}.md"


def _brief(diagnostics: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], int]]:
    return [(d["code"], d["range"], d["severity"]) for d in diagnostics]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A path a client must quote in its URIs (a space, a "+", a non-ASCII letter): the server
    # must find its documents by them, as editors send them.
    root = tmp_path_factory.mktemp("served") / "my runs+v2 ü"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name, text in {
        "fixme.py": FIXME,
        "edited.py": FIXME,
        "actions.py": FIXME,
        "guarded.py": GUARDED,
        "loop.py": LOOP,
        "steps.py": STEPS_SUBMITS,
        "broken.py": FIXME,
    }.items():
        (package / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[LspClient]:
    client = LspClient(cwd=project)
    client.answers["workspace/applyEdit"] = lambda _params: {"applied": True}
    try:
        client.initialize(project)
        yield client
        assert client.stop() == 0  # shutdown, then exit: exit code 0
    finally:
        client.kill()


def test_initialize_declares_what_the_server_does(server: LspClient) -> None:
    capabilities = server.initialized["capabilities"]
    assert capabilities["positionEncoding"] == "utf-16"
    assert capabilities["textDocumentSync"] == {"openClose": True, "change": 1, "save": True}
    assert capabilities["codeActionProvider"] == {
        "codeActionKinds": ["quickfix", "source.fixAll.tinker-lint"]
    }
    assert capabilities["executeCommandProvider"] == {"commands": ["tinker-lint.fixAll"]}
    assert capabilities["diagnosticProvider"]["interFileDependencies"] is True
    assert capabilities["hoverProvider"] is True
    # The client can watch files for it: asked to, for helpers, configurations and pins.
    registered = server.wait_for("client/registerCapability")
    (registration,) = registered["registrations"]
    assert registration["method"] == "workspace/didChangeWatchedFiles"
    assert [w["globPattern"] for w in registration["registerOptions"]["watchers"]] == [
        "**/*.py",
        "**/pyproject.toml",
        "**/setup.cfg",
        "**/requirements*.txt",
        "**/uv.lock",
        "**/poetry.lock",
    ]


def test_diagnostics_on_open_are_the_commands_in_utf16_columns(
    server: LspClient, project: Path
) -> None:
    path = project / "pkg" / "fixme.py"
    found = server.diagnostics(path, after=server.open(path), version=1)
    # TNK105 is at code-point column 30 (1-based); the emoji before it is two UTF-16 units.
    assert found == [
        {
            "range": _range(1, 30, 1, 100),
            "message": TNK105_MESSAGE,
            "severity": 2,  # a warning
            "code": "TNK105",
            "codeDescription": {"href": _href("TNK105")},
            "source": "tinker-lint",
        },
        {
            "range": _range(7, 82, 7, 88),
            "message": TNK101_MESSAGE,
            "severity": 1,  # an error
            "code": "TNK101",
            "codeDescription": {"href": _href("TNK101")},
            "source": "tinker-lint",
        },
    ]


def test_the_same_findings_as_the_command(project: Path, server: LspClient) -> None:
    """What the command reports for the file, finding for finding (line, column, message)."""
    import json
    import subprocess

    from tests.checkout import checkout_env

    path = project / "pkg" / "fixme.py"
    command = [sys.executable, "-m", "tinker_lint", "--output-format", "json", "--no-cache"]
    run = subprocess.run(
        [*command, str(path)], env=checkout_env(), capture_output=True, text=True, timeout=120
    )
    cli = [
        (d["code"], d["location"]["row"] - 1, d["message"], d["level"])
        for d in json.loads(run.stdout)
    ]
    served = server.diagnostics(path, after=server.open(path, version=7), version=7)
    severity = {1: "error", 2: "warning", 3: "note"}
    assert [
        (d["code"], d["range"]["start"]["line"], d["message"], severity[d["severity"]])
        for d in served
    ] == cli


def test_a_change_publishes_the_new_texts_findings(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "edited.py"
    assert len(server.diagnostics(path, after=server.open(path), version=1)) == 2
    # A line above, and the loop gone: only TNK105 is left, a line further down.
    text = "# a comment\n" + FIXME[: FIXME.index("\n\n\ndef train")] + "\n"
    found = server.diagnostics(path, after=server.change(path, text, 2), version=2)
    assert _brief(found) == [("TNK105", _range(2, 30, 2, 100), 2)]
    # Silenced on its line, as the command does.
    silenced = text.replace(
        'loss_fn="cross_entropy")\n    return',
        'loss_fn="cross_entropy")  # noqa: TNK105\n    return',
    )
    assert server.diagnostics(path, after=server.change(path, silenced, 3), version=3) == []


def _actions(server: LspClient, path: Path, line: int, **context: Any) -> list[dict[str, Any]]:
    params = {
        "textDocument": {"uri": uri(path)},
        "range": _range(line, 0, line, 0),
        "context": {"diagnostics": [], **context},
    }
    return list(server.request("textDocument/codeAction", params) or [])


def _edits(action: dict[str, Any], path: Path, version: int) -> list[dict[str, Any]]:
    (change,) = action["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uri(path), "version": version}
    return list(change["edits"])


def test_quick_fixes_and_disable_for_this_line(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "actions.py"
    server.diagnostics(path, after=server.open(path), version=1)
    actions = _actions(server, path, 1)
    assert [(a["title"], a["kind"], a.get("isPreferred")) for a in actions] == [
        (
            "TNK105: Replace `await ….forward_backward_async(…)` with `….forward_backward(…)`",
            "quickfix",
            True,
        ),
        ("Disable TNK105 for this line", "quickfix", None),
        ("Fix all safe tinker-lint problems", "source.fixAll.tinker-lint", None),
    ]
    fix, disable, _ = actions
    assert [d["code"] for d in fix["diagnostics"]] == ["TNK105"]
    assert _edits(fix, path, 1) == [
        {"range": _range(1, 24, 1, 68), "newText": "training_client.forward_backward"}
    ]
    lines = FIXME.splitlines(keepends=True)
    fixed = apply_edits(FIXME, _edits(fix, path, 1))
    assert fixed == "".join([lines[0], FIXED_TNK105_LINE, *lines[2:]])
    assert _edits(disable, path, 1) == [
        {"range": _range(1, 100, 1, 100), "newText": "  # noqa: TNK105"}
    ]
    # A noqa with codes is extended, not doubled.
    noqa = FIXME.replace(
        'loss_fn="cross_entropy")\n    return', 'loss_fn="cross_entropy")  # noqa: E501\n    return'
    )
    server.diagnostics(path, after=server.change(path, noqa, 2), version=2)
    (disable,) = [a for a in _actions(server, path, 1) if a["title"].startswith("Disable")]
    assert disable["title"] == "Disable TNK105 for this line"
    assert _edits(disable, path, 2) == [{"range": _range(1, 114, 1, 114), "newText": ", TNK105"}]
    silenced = apply_edits(noqa, _edits(disable, path, 2))
    assert "# noqa: E501, TNK105\n" in silenced
    found = server.diagnostics(path, after=server.change(path, silenced, 3), version=3)
    assert [d["code"] for d in found] == ["TNK101"]


def test_an_unsafe_fix_is_labelled_and_not_preferred(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "guarded.py"
    found = server.diagnostics(path, after=server.open(path), version=1)
    assert _brief(found) == [("TNK101", _range(3, 86, 3, 92), 1)]
    actions = _actions(server, path, 3)
    assert [(a["title"], a.get("isPreferred")) for a in actions] == [
        (
            "TNK101: Keep the future in `result_future` and wait for it after `optim_step(…)` "
            "(unsafe)",
            False,
        ),
        ("Disable TNK101 for this line", None),
    ]
    # No safe fix: no "fix all".
    assert _actions(server, path, 3, only=["source.fixAll"]) == []


def test_fix_all_as_a_code_action_and_as_a_command(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "fixme.py"
    server.diagnostics(path, after=server.open(path, version=11), version=11)
    lines = FIXME.splitlines(keepends=True)
    everything_fixed = "".join(
        [lines[0], FIXED_TNK105_LINE, *lines[2:7], FIXED_TNK101_LINES, *lines[9:]]
    )
    (action,) = _actions(server, path, 0, only=["source.fixAll"])
    assert (action["title"], action["kind"]) == (
        "Fix all safe tinker-lint problems",
        "source.fixAll.tinker-lint",
    )
    assert apply_edits(FIXME, _edits(action, path, 11)) == everything_fixed
    # The light bulb's (no kind asked): a command, run only when chosen; it sends applyEdit.
    offered = _actions(server, path, 0)[-1]
    assert offered["command"] == {
        "title": "Fix all safe tinker-lint problems",
        "command": "tinker-lint.fixAll",
        "arguments": [uri(path)],
    }
    mark = server.mark()
    server.request("workspace/executeCommand", offered["command"])
    applied = server.wait_for("workspace/applyEdit", after=mark)
    assert applied["label"] == "Fix all safe tinker-lint problems"
    assert apply_edits(FIXME, _edits(applied, path, 11)) == everything_fixed


def test_editing_a_helper_unsaved_changes_its_callers_findings(
    server: LspClient, project: Path
) -> None:
    loop, steps = project / "pkg" / "loop.py", project / "pkg" / "steps.py"
    assert server.diagnostics(loop, after=server.open(loop), version=1) == []
    server.diagnostics(steps, after=server.open(steps), version=1)
    # The helper now waits (in the editor only: the disk still has the old text).
    mark = server.change(steps, STEPS_WAITS, 2)
    found = server.diagnostics(loop, after=mark)
    assert _brief(found) == [("TNK101", _range(5, 14, 5, 33), 1)]
    assert found[0]["message"] == (
        "Waiting for `step()` before submitting `optim_step`, which does not need it"
    )
    assert steps.read_text(encoding="utf-8") == STEPS_SUBMITS
    # Closed unsaved: the helper is the disk's again, and so are the caller's findings.
    assert server.diagnostics(loop, after=server.close(steps)) == []


def test_hover_tells_the_rule_over_its_code_and_over_a_finding(
    server: LspClient, project: Path
) -> None:
    from tinker_lint.docs import rule_summary

    path = project / "pkg" / "hover.py"
    text = "import tinker  # noqa: TNK101, TNK4\n" + FIXME
    path.write_text(text, encoding="utf-8")
    server.diagnostics(path, after=server.open(path), version=1)

    def hover(line: int, character: int) -> Any:
        position = {"line": line, "character": character}
        params = {"textDocument": {"uri": uri(path)}, "position": position}
        return server.request("textDocument/hover", params)

    assert hover(0, 25) == {
        "contents": {
            "kind": "markdown",
            "value": f"**TNK101** `wait-before-submit` (error)\n\n{rule_summary('TNK101')}\n\n"
            f"[TNK101]({_href('TNK101')})",
        }
    }
    # Over the TNK105 finding, after the emoji (UTF-16 column 40 is code point 39): the
    # finding's help instead of the rule's summary.
    assert hover(2, 40)["contents"]["value"] == (
        "**TNK105** `deprecated-async-method` (warning)\n\n"
        "tinker 0.38 deprecated the clients' `*_async` methods (a `FutureWarning` per call): call "
        "`forward_backward()`, which returns an awaitable `APIFuture` at once\n\n"
        f"[TNK105]({_href('TNK105')})"
    )
    assert hover(0, 33) is None  # TNK4 is a prefix, not a rule
    assert hover(0, 2) is None  # nothing there


def test_the_lints_warnings_go_to_the_clients_log(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "typo.py"
    path.write_text("x = 1  # noqa: TNK999\n" + FIXME, encoding="utf-8")
    mark = server.open(path)
    logged = server.wait_for("window/logMessage", lambda p: "TNK999" in p["message"], after=mark)
    assert logged == {
        "type": 2,
        "message": f"tinker-lint: {path}:1: unknown rule code `TNK999` in `# noqa` (it silences "
        "nothing)",
    }


def _watched(server: LspClient, path: Path, kind: int) -> int:
    """The client's watcher tells of a file created (1), changed (2) or deleted (3) on disk."""
    mark = server.mark()
    server.notify(
        "workspace/didChangeWatchedFiles", {"changes": [{"uri": uri(path), "type": kind}]}
    )
    return mark


def test_a_helper_deleted_and_created_again_on_disk(server: LspClient, project: Path) -> None:
    package = project / "disk"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    loop, steps = package / "loop.py", package / "steps.py"
    loop.write_text(LOOP, encoding="utf-8")
    steps.write_text(STEPS_WAITS, encoding="utf-8")
    found = server.diagnostics(loop, after=server.open(loop), version=1)
    assert _brief(found) == [("TNK101", _range(5, 14, 5, 33), 1)]
    steps.unlink()
    assert server.diagnostics(loop, after=_watched(server, steps, 3)) == []  # no helper: no wait
    steps.write_text(STEPS_WAITS, encoding="utf-8")
    found = server.diagnostics(loop, after=_watched(server, steps, 1))
    assert _brief(found) == [("TNK101", _range(5, 14, 5, 33), 1)]
    steps.write_text(STEPS_SUBMITS, encoding="utf-8")
    assert server.diagnostics(loop, after=_watched(server, steps, 2)) == []


def test_a_syntax_error_mid_edit(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "broken.py"
    server.diagnostics(path, after=server.open(path), version=1)
    broken = FIXME.replace("    return await fut\n", "    return await (fut\n")
    found = server.diagnostics(path, after=server.change(path, broken, 2), version=2)
    # The command's: TNK001 at the parenthesis never closed.
    assert _brief(found) == [("TNK001", _range(2, 17, 2, 17), 1)]
    assert found[0]["message"] == "SyntaxError: '(' was never closed"
    # Still serving: the next text is linted.
    found = server.diagnostics(path, after=server.change(path, FIXME, 3), version=3)
    assert [d["code"] for d in found] == ["TNK105", "TNK101"]


def test_edits_faster_than_lints_end_on_the_newest_text(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "typing.py"
    path.write_text(FIXME, encoding="utf-8")
    server.diagnostics(path, after=server.open(path), version=1)
    mark = server.mark()
    cut = FIXME.index("\n\n\ndef train")
    for version in range(2, 12):  # as fast as one types: each text a little longer
        server.change(path, FIXME[:cut] + "\n" + "#" * version + "\n", version)
    found = server.diagnostics(path, after=mark, version=11)
    assert _brief(found) == [("TNK105", _range(1, 30, 1, 100), 2)]
    published = [
        m["params"]["version"]
        for m in server.received[mark:]
        if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri(path)
    ]
    assert published[-1] == 11 and published == sorted(published)
    # A request about a document that was never opened is answered, with nothing.
    never = {
        "textDocument": {"uri": uri(project / "pkg" / "never.py")},
        "range": _range(0, 0, 0, 0),
    }
    assert (
        server.request("textDocument/codeAction", {**never, "context": {"diagnostics": []}}) is None
    )


def test_a_configuration_error_is_shown_and_reloaded(server: LspClient, project: Path) -> None:
    sub = project / "bad"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[tool.tinker-lint]\nselect = 5\n", encoding="utf-8")
    path = sub / "loop.py"
    path.write_text(FIXME, encoding="utf-8")
    mark = server.open(path)
    shown = server.wait_for("window/showMessage", after=mark)
    assert shown == {
        "type": 1,
        # The configuration's path as the command names it: from the server's directory.
        "message": "tinker-lint: bad/pyproject.toml [tool.tinker-lint]: `select` must be "
        "a list of rule codes, got 5",
    }
    assert server.diagnostics(path, after=mark) == []
    # Mended on disk: read again at the next lint (its stat changed), no watcher needed.
    (sub / "pyproject.toml").write_text(
        '[tool.tinker-lint]\nselect = ["TNK101"]\ntinker-version = "0.38.0"\n', encoding="utf-8"
    )
    found = server.diagnostics(path, after=server.change(path, FIXME, 2), version=2)
    assert [d["code"] for d in found] == ["TNK101"]


def test_a_dependency_file_is_judged_as_the_command_judges_it(
    server: LspClient, project: Path
) -> None:
    path = project / "requirements.txt"
    text = "tinker==0.38.0\ntransformers==5.3.0\n"
    path.write_text(text, encoding="utf-8")
    found = server.diagnostics(path, after=server.open(path, text), version=1)
    assert _brief(found) == [("TNK302", _range(1, 0, 1, 19), 1)]
    assert found[0]["message"].startswith("`transformers==5.3.0` pins transformers 5.3.0")
    # No Python code actions on it.
    assert _actions(server, path, 1) == []


def test_a_file_the_configuration_excludes_gets_nothing(server: LspClient, project: Path) -> None:
    sub = project / "excluding"
    (sub / "generated").mkdir(parents=True)
    (sub / "pyproject.toml").write_text(
        '[tool.tinker-lint]\nexclude = ["generated"]\ntinker-version = "0.38.0"\n', encoding="utf-8"
    )
    excluded, kept = sub / "generated" / "loop.py", sub / "loop.py"
    for path in (excluded, kept):
        path.write_text(FIXME, encoding="utf-8")
    assert server.diagnostics(excluded, after=server.open(excluded), version=1) == []
    found = server.diagnostics(kept, after=server.open(kept), version=1)
    assert [d["code"] for d in found] == ["TNK105", "TNK101"]


def test_a_huge_file_gets_the_commands_tnk003(server: LspClient, project: Path) -> None:
    path = project / "pkg" / "huge.py"
    # Over the default max-file-chars (1,000,000), with Tinker calls the rules would judge.
    text = FIXME + "x = 1\n" * 170_000
    path.write_text(text, encoding="utf-8")
    found = server.diagnostics(path, after=server.open(path, text), version=1)
    assert [(d["code"], d["range"]["start"]) for d in found] == [
        ("TNK003", {"line": 0, "character": 0})
    ]


def test_pull_diagnostics_when_the_client_declares_them(project: Path) -> None:
    capabilities = {
        "general": {"positionEncodings": ["utf-8", "utf-16"]},
        "textDocument": {"diagnostic": {"dynamicRegistration": False}},
        "workspace": {"diagnostics": {"refreshSupport": True}},
    }
    client = LspClient(cwd=project)
    try:
        # The client prefers UTF-8 columns: they are bytes, the emoji four, the accent two.
        assert (
            client.initialize(project, capabilities)["capabilities"]["positionEncoding"] == "utf-8"
        )
        fixme = project / "pkg" / "fixme.py"
        client.open(fixme)
        report = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri(fixme)}})
        assert [(d["code"], d["range"]) for d in report["items"]] == [
            ("TNK105", _range(1, 33, 1, 103)),
            ("TNK101", _range(7, 82, 7, 88)),
        ]
        # A client that takes no versioned edits gets plain ones (``changes``), in its units.
        (fix, *_) = client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri(fixme)},
                "range": _range(1, 0, 1, 0),
                "context": {"diagnostics": []},
            },
        )
        assert fix["edit"] == {
            "changes": {
                uri(fixme): [
                    {"range": _range(1, 27, 1, 71), "newText": "training_client.forward_backward"}
                ]
            }
        }
        path = project / "pkg" / "guarded.py"
        client.open(path)
        report = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri(path)}})
        assert report["kind"] == "full"
        assert _brief(report["items"]) == [("TNK101", _range(3, 86, 3, 92), 1)]
        # A helper edited: the client is told to pull again, and the caller's pull sees it.
        loop, steps = project / "pkg" / "loop.py", project / "pkg" / "steps.py"
        client.open(loop)
        pulled = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri(loop)}})
        assert pulled["items"] == []
        client.open(steps)
        client.request("textDocument/diagnostic", {"textDocument": {"uri": uri(steps)}})
        mark = client.change(steps, STEPS_WAITS, 2)
        client.request("textDocument/diagnostic", {"textDocument": {"uri": uri(steps)}})
        client.wait_for("workspace/diagnostic/refresh", after=mark)
        pulled = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri(loop)}})
        assert _brief(pulled["items"]) == [("TNK101", _range(5, 14, 5, 33), 1)]
        # Pulled, so never pushed as well (it would show twice).
        assert not [m for m in client.received if m["method"] == "textDocument/publishDiagnostics"]
        assert client.stop() == 0
    finally:
        client.kill()


def test_the_server_exits_when_its_client_goes(project: Path) -> None:
    client = LspClient(cwd=project)
    try:
        client.initialize(project)
        assert client.process.stdin is not None
        # A message that is not JSON, and one without the fields it needs: said, and served on.
        client.process.stdin.write(b"Content-Length: 5\r\n\r\n{bad}")
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri(project / "x.py")}})
        never = {"textDocument": {"uri": uri(project / "x.py")}, "range": _range(0, 0, 0, 0)}
        assert (
            client.request("textDocument/codeAction", {**never, "context": {"diagnostics": []}})
            is None
        )
        client.process.stdin.close()  # the editor is gone without a word
        assert client.process.wait(30) == 1  # gone without shutdown: 1, as after a bare exit
    finally:
        client.kill()
    client = LspClient(cwd=project)
    try:
        client.initialize(project)
        client.notify("exit")  # exit without shutdown: LSP's exit code 1
        assert client.process.wait(30) == 1
    finally:
        client.kill()


def test_without_the_extra_the_command_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tinker_lint.cli import main

    monkeypatch.setitem(sys.modules, "pygls", None)  # as if pygls were not installed
    assert main(["server"]) == 2
    assert capsys.readouterr().err == (
        "tinker-lint: error: `tinker-lint server` needs pygls: install tinker-lint[server] "
        "(pip install 'tinker-lint[server]')\n"
    )


def test_positions_in_each_encoding() -> None:
    from tinker_lint.server.convert import lsp_column, split_lines

    line = 'note = "🙂é"; fut'
    column = line.index("fut")  # 13 code points in, one of them outside the BMP, one 2 bytes
    assert lsp_column(line, column, "utf-32") == 13
    assert lsp_column(line, column, "utf-16") == 14
    assert lsp_column(line, column, "utf-8") == 17
    assert split_lines("a\r\nb\rc\nd\fe") == ["a", "b", "c", "d\fe"]
    # Without a CR (the fast path): still only LF ends a line, not what str.splitlines splits at.
    assert split_lines("a\nb\f\vc\u2028d\x85e\n") == ["a", "b\f\vc\u2028d\x85e", ""]


def test_a_file_libcst_cannot_parse_is_a_finding(server: LspClient, project: Path) -> None:
    """Valid Python libcst's parser gives up on (4,000 adjacent strings): TNK003, not a silent
    pass (issue 29, item 4)."""
    path = project / "pkg" / "adjacent.py"
    path.write_text("x = (" + " ".join(['"a"'] * 4000) + ")\n" + FIXME, encoding="utf-8")
    found = server.diagnostics(path, after=server.open(path), version=1)
    assert found == [
        {
            "range": _range(0, 0, 0, 0),
            "message": "Not analysed: libcst cannot parse it, though Python can; only its syntax "
            "was checked",
            "severity": 2,  # a warning
            "code": "TNK003",
            "codeDescription": {"href": _href("TNK003")},
            "source": "tinker-lint",
        }
    ]
