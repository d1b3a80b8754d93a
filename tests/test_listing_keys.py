"""Where an import was looked for, as a dependency of a cached result (``io/files.py``): which of
the names looked for a directory held, merged per directory, and asked again of the directory."""

from __future__ import annotations

import os

from tinker_lint.io.files import (
    is_listing_key,
    list_directory,
    listing_answer,
    listing_directory,
    listing_key,
    merged_listings,
)


def test_a_listing_key_names_no_file_and_says_which_names_are_there(tmp_path):
    (tmp_path / "steps.py").write_text("")
    (tmp_path / "pkg").mkdir()
    key = listing_key(str(tmp_path), ["steps.py", "steps" + os.sep, "pkg" + os.sep, "x.py"])
    assert is_listing_key(key) and not is_listing_key(str(tmp_path / "steps.py"))
    assert listing_directory(key) == str(tmp_path)
    assert listing_answer(list_directory(str(tmp_path)), key) == "listed:pkg/\0steps.py"
    (tmp_path / "x.py").write_text("")  # a module appearing changes the answer
    assert listing_answer(list_directory(str(tmp_path)), key) == "listed:pkg/\0steps.py\0x.py"
    (tmp_path / "notes.txt").write_text("")  # another file does not
    assert listing_answer(list_directory(str(tmp_path)), key) == "listed:pkg/\0steps.py\0x.py"
    assert list_directory(str(tmp_path / "missing")) == frozenset()


def test_the_listings_of_one_directory_are_merged():
    a = listing_key("/p", ["a.py", "a/"])
    b = listing_key("/p", ["b.py", "b/"])
    other = listing_key("/p/src", ["a.py"])
    merged = merged_listings({"/p/m.py": "sha", a: "listed:a.py", b: "listed:", other: "listed:"})
    assert merged == {
        "/p/m.py": "sha",
        listing_key("/p", ["a.py", "a/", "b.py", "b/"]): "listed:a.py",
        other: "listed:",
    }
