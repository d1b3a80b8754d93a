"""``doctor --python ENV`` reads metadata only, as its docs say: the environment's ``.pth`` files
(whose ``import`` lines Python runs at start-up) are not run, and what they list is still read
(issue 13, item 10)."""

from __future__ import annotations

import sys

import pytest

from tests.test_doctor import CLEAN, doctor, make_env, rows


def test_the_environments_pth_files_are_read_not_run(tmp_path, capsys):
    python = make_env(tmp_path / "env", {k: v for k, v in CLEAN.items() if k != "numpy"})
    site = python.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    marker = tmp_path / "ran"
    (site / "site-packages" / "noisy.pth").write_text(
        f"import sys; print('hello from a .pth'); open({str(marker)!r}, 'w').close()\n"
    )
    # A directory a .pth file lists (as a legacy editable install does): its metadata counts.
    extra = tmp_path / "extra"
    info = extra / "numpy-2.4.6.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 2.4.6\n")
    (site / "site-packages" / "extra.pth").write_text(f"# a comment\n{extra}\nmissing-dir\n")
    code, out = doctor(["--python", str(python)], capsys)
    assert not marker.exists(), "the .pth file was run"
    assert "hello from a .pth" not in out
    assert code == 0, out
    table = rows(out)
    assert table["numpy"][:2] == ["2.4.6", "ok"]
    assert table["pydantic"][:2] == ["2.13.4", "ok"]


@pytest.mark.parametrize("system", [False, True])
def test_a_virtualenvs_own_site_packages_are_found(tmp_path, capsys, system):
    python = make_env(tmp_path / "env", CLEAN, system_site_packages=system)
    code, out = doctor(["--python", str(python)], capsys)
    assert code == 0, out
    assert rows(out)["transformers"][:2] == ["5.3.1", "ok"]
