"""Every `[tool.tinker-lint]` key, end to end through the command line; every mistake in the file
is exit 2 with a message naming the file and the key."""

from __future__ import annotations

import json
import textwrap

import pytest

from tinker_lint.cli import main

BAD_LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""

# A loop made hot only by a step wrapper from another module (named in `hot-loop-calls`).
WRAPPED_STEP = """\
import tinker
import mylib

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    sampler = tc.create_sampling_client(model_path="tinker://run/sampler_weights/base")
    mylib.run_step(tc, sampler, batch)
"""

# A setup call under a project-specific cadence flag (named in `cadence-names`).
CADENCE = """\
import tinker

service_client = tinker.ServiceClient()
tc = service_client.create_lora_training_client(base_model="m").result()
for step, batch in enumerate(batches):
    fwd = tc.forward_backward(batch, loss_fn="cross_entropy")
    opt = tc.optim_step(tinker.AdamParams(learning_rate=1e-4))
    fwd.result()
    opt.result()
    if refresh_now:
        sampler = service_client.create_sampling_client(base_model="m")
"""

DEPRECATED = """\
import tinker

sc = tinker.ServiceClient().create_sampling_client(base_model="m").result()


async def main(prompt, params):
    return await sc.sample_async(prompt, num_samples=1, sampling_params=params)
"""


def lint(capsys, *argv: str) -> tuple[int, list[tuple[str, int, int, str]], str]:
    """Exit code, (file, line, col, code) of each finding, and stderr."""
    code = main(["--output-format", "json", *argv])
    out, err = capsys.readouterr()
    found = []
    if code != 2:
        found = [
            (d["filename"], d["location"]["row"], d["location"]["column"], d["code"])
            for d in json.loads(out)
        ]
    return code, found, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def make(config: str, **files: str):
        (tmp_path / "pyproject.toml").write_text(
            "[project]\nname = 'demo'\n\n[tool.tinker-lint]\n" + textwrap.dedent(config)
        )
        for name, text in files.items():
            path = tmp_path / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return tmp_path

    return make


BOTH = [("train.py", 5, 66, "TNK101"), ("train.py", 6, 58, "TNK102")]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("", BOTH),
        ('select = ["TNK101"]', BOTH[:1]),
        ('ignore = ["TNK102"]', BOTH[:1]),
        ('ignore = ["TNK1"]', []),
        ('select = ["TNK101"]\nextend-select = ["TNK102"]', BOTH),
        ('select = ["TNK0"]\nextend-select = ["TNK101"]', BOTH[:1]),
    ],
)
def test_selection_keys(project, capsys, config, expected):
    project(config, **{"train.py": BAD_LOOP})
    code, found, _ = lint(capsys, ".")
    assert found == expected
    assert code == (1 if expected else 0)


def test_cli_flags_override_the_file(project, capsys):
    project('select = ["TNK101"]', **{"train.py": BAD_LOOP})
    assert lint(capsys, "--select", "TNK102", ".")[1] == BOTH[1:]
    assert lint(capsys, "--isolated", ".")[1] == BOTH


def test_per_file_ignores_relative_to_the_project_root(project, capsys, monkeypatch):
    root = project(
        '[tool.tinker-lint.per-file-ignores]\n"scripts/*" = ["TNK1"]\n"train.py" = ["TNK102"]\n',
        **{"train.py": BAD_LOOP, "scripts__old.py": BAD_LOOP},
    )
    assert lint(capsys, ".")[1] == BOTH[:1]
    # The pattern is relative to pyproject.toml, wherever tinker-lint is run from.
    assert lint(capsys, "scripts")[1] == []
    monkeypatch.chdir(root / "scripts")
    code, found, _ = lint(capsys, "old.py", "../train.py")
    assert (code, found) == (1, [("../train.py", 5, 66, "TNK101")])


def test_exclude(project, capsys):
    project(
        'exclude = ["generated/*", "legacy.py"]',
        **{"train.py": BAD_LOOP, "legacy.py": BAD_LOOP, "generated__a.py": BAD_LOOP},
    )
    assert lint(capsys, ".")[1] == BOTH
    # A file named on the command line is linted, unless --force-exclude (pre-commit's hook).
    assert [f[0] for f in lint(capsys, "legacy.py")[1]] == ["legacy.py", "legacy.py"]
    assert lint(capsys, "--force-exclude", "legacy.py", "generated/a.py")[1] == []
    assert lint(capsys, "--force-exclude", "train.py")[1] == BOTH


def test_tinker_version(project, capsys):
    project('tinker-version = "0.38"', **{"dep.py": DEPRECATED})
    assert lint(capsys, ".")[1] == [("dep.py", 7, 18, "TNK105")]
    project('tinker-version = "0.37"')
    assert lint(capsys, ".")[1] == []


def test_hot_loop_calls(project, capsys):
    project("", **{"hot.py": WRAPPED_STEP})
    assert lint(capsys, ".")[1] == []
    for names in ('["mylib.run_step"]', '["run_step"]', '["mylib.*"]'):
        project(f"hot-loop-calls = {names}")
        assert lint(capsys, ".")[1] == [("hot.py", 6, 15, "TNK107")], names
    project('hot-loop-calls = ["run"]')
    assert lint(capsys, ".")[1] == []


def test_cadence_names(project, capsys):
    project('select = ["TNK107"]', **{"cad.py": CADENCE})
    assert lint(capsys, ".")[1] == [("cad.py", 11, 19, "TNK107")]
    project('select = ["TNK107"]\ncadence-names = ["refresh_*"]')
    assert lint(capsys, ".")[1] == []


def test_max_file_chars(project, capsys):
    """As ``--max-file-chars``: over the limit, TNK003 in place of the analysis; 0 lifts it; the
    flag wins over the file."""
    size = len(BAD_LOOP)
    project("max-file-chars = 100", **{"train.py": BAD_LOOP})
    assert lint(capsys, ".")[:2] == (1, [("train.py", 1, 1, "TNK003")])
    assert lint(capsys, "--max-file-chars", "0", ".")[:2] == (1, BOTH)
    assert lint(capsys, "--max-file-chars", f"{size}", ".")[:2] == (1, BOTH)
    project(f"max-file-chars = {size}")
    assert lint(capsys, ".")[:2] == (1, BOTH)  # at the limit: analysed
    assert lint(capsys, "--max-file-chars", "100", ".")[:2] == (1, [("train.py", 1, 1, "TNK003")])
    project("max-file-chars = 0")
    assert lint(capsys, ".")[:2] == (1, BOTH)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('selct = ["TNK101"]', "unknown key `selct`"),
        ('select = ["TNK999"]', "unknown rule code or prefix 'TNK999' in `select`"),
        ('ignore = ["E501"]', "unknown rule code or prefix 'E501' in `ignore`"),
        ('extend-select = ["TNK9"]', "unknown rule code or prefix 'TNK9' in `extend-select`"),
        (
            '[tool.tinker-lint.per-file-ignores]\n"tests/*" = ["TNK77"]',
            "unknown rule code or prefix 'TNK77' in `per-file-ignores.tests/*`",
        ),
        ('select = "TNK101"', "`select` must be a list of rule codes"),
        ('per-file-ignores = ["x"]', "`per-file-ignores` must be a table"),
        ('exclude = "build"', "`exclude` must be a list of strings"),
        ("cadence-names = [1]", "`cadence-names` must be a list of strings"),
        ('hot-loop-calls = "step"', "`hot-loop-calls` must be a list of strings"),
        ('tinker-version = "latest"', "`tinker-version`: invalid version 'latest'"),
        ("tinker-version = 0.38", "`tinker-version` must be a string"),
        ('preview = "yes"', "`preview` must be true or false, got 'yes'"),
        (
            "max-file-chars = -1",
            "[tool.tinker-lint]: `max-file-chars` must be a number of characters (0: no limit), "
            "got -1",
        ),
        ('max-file-chars = "1000"', "`max-file-chars` must be a number of characters"),
        ("max-file-chars = 1.5", "`max-file-chars` must be a number of characters"),
        ("max-file-chars = true", "`max-file-chars` must be a number of characters"),
        ("select = [", "invalid TOML"),
    ],
)
def test_config_errors_name_the_file_and_key(project, capsys, config, message):
    project(config, **{"train.py": BAD_LOOP})
    code, _, err = lint(capsys, ".")
    assert code == 2
    assert err.startswith("tinker-lint: error: pyproject.toml")
    assert message in err


def test_config_error_through_the_real_command(project, capsys):
    """--config names another file: the error names that file."""
    root = project("", **{"train.py": BAD_LOOP})
    (root / "ci.toml").write_text('[tool.tinker-lint]\nignore = ["TNK1O1"]\n')
    code, _, err = lint(capsys, "--config", "ci.toml", ".")
    assert code == 2
    assert (
        err
        == "tinker-lint: error: ci.toml [tool.tinker-lint]: unknown rule code or prefix 'TNK1O1' in `ignore`\n"
    )
    code, _, err = lint(capsys, "--select", "TNK1O1", ".")
    assert code == 2
    assert "command line: unknown rule code or prefix 'TNK1O1' in `--select`" in err
