"""``io.installed.installed_version``: what ``importlib.metadata.version`` says, read without
importing it where the path is plain, and asked of it where it is not."""

from __future__ import annotations

import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from tinker_lint.io import installed


def _expected(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_every_installed_distribution_reads_as_importlib_metadata_reads_it():
    names = {d.metadata["Name"] for d in metadata.distributions()}
    assert len(names) > 20
    spellings = {"TINKER", "Tinker", "tinker_lint", "tinker.lint", "Py-Yaml", "no-such-thing"}
    for name in sorted(names | spellings):
        assert installed._plain_version(name) == _expected(name), name
        assert installed.installed_version(name) == _expected(name), name


def _dist(site: Path, directory: str, metadata_text: str | None, file: str = "METADATA") -> None:
    info = site / directory
    info.mkdir(parents=True)
    if metadata_text is not None:
        (info / file).write_text(metadata_text, encoding="utf-8")


@pytest.mark.parametrize(
    ("directory", "text", "file", "expected"),
    [
        (
            "demo_pkg-1.2.dist-info",
            "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.2\n",
            "METADATA",
            "1.2",
        ),
        (
            "Demo.Pkg-1.3.dist-info",
            "Name: Demo.Pkg\nversion:\t1.3 \n\nVersion: 9\n",
            "METADATA",
            "1.3 ",
        ),
        ("demo_pkg-1.4.egg-info", "Name: demo-pkg\nVersion: 1.4\n", "PKG-INFO", "1.4"),
    ],
)
def test_a_plain_directory_on_the_path(tmp_path, monkeypatch, directory, text, file, expected):
    site = tmp_path / "site"
    _dist(site, directory, text, file)
    monkeypatch.syspath_prepend(str(site))
    assert installed._plain_version("demo-pkg") == expected == _expected("demo-pkg")


@pytest.mark.parametrize(
    "text",
    [
        "Name: demo-pkg\n",  # no Version header: importlib.metadata gives None
        "Name: demo-pkg\nVersion: 1.5\n  .post1\n",  # a folded value
        "not a header\nVersion: 1.6\n",  # the parser ends the headers at the first line
    ],
)
def test_metadata_this_reading_does_not_follow_is_asked_of_importlib_metadata(
    tmp_path, monkeypatch, text
):
    site = tmp_path / "site"
    _dist(site, "demo_pkg-1.dist-info", text)
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(installed._Ask):
        installed._plain_version("demo-pkg")
    assert installed.installed_version("demo-pkg") == _expected("demo-pkg")


def test_a_zip_archive_on_the_path_is_asked_of_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("zipped_pkg-2.0.dist-info/METADATA", "Name: zipped-pkg\nVersion: 2.0\n")
    monkeypatch.syspath_prepend(str(archive))
    with pytest.raises(installed._Ask):
        installed._plain_version("zipped-pkg")
    assert installed.installed_version("zipped-pkg") == "2.0"


def test_another_finder_of_distributions_is_asked_of_importlib_metadata(monkeypatch):
    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    with pytest.raises(installed._Ask):
        installed._plain_version("tinker")
    assert installed.installed_version("tinker") == _expected("tinker")
