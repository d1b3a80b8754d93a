"""The version of an installed distribution, as ``importlib.metadata.version`` gives it, read
without importing ``importlib.metadata`` in the usual case.

Every run of the command asks for the installed tinker's version when nothing else says which
tinker the project targets (``run.resolve``), and importing ``importlib.metadata`` costs about
30 ms (most of it the ``email`` package its metadata parser needs): a fifth of flake8's whole
start-up. Where ``sys.path`` holds only directories and the standard finder is the only one that
finds distributions, the lookup is done here as ``importlib.metadata`` does it: the first
``*.dist-info`` or ``*.egg-info`` directory whose name normalises to the distribution's, in
``sys.path`` order and, within a directory, in the order it is listed; its ``METADATA`` (else
``PKG-INFO``), whose first ``Version`` header is the version. Anything less plain (a zip archive or
an egg on the path, another finder of distributions, a metadata file this reading does not
follow) is asked of ``importlib.metadata`` itself. ``tests/test_installed.py`` compares the two.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
import sys

_INFO_SUFFIXES = (".dist-info", ".egg-info")
# A header line as the ``email`` package's parser takes one (``email.feedparser.headerRE``), and
# a continuation line.
_HEADER = re.compile(r"([\041-\071\073-\176]*):")
_CONTINUATION = (" ", "\t")


class _Ask(Exception):
    """Not plain enough to read here: ``importlib.metadata`` answers."""


def installed_version(name: str) -> str | None:
    """``importlib.metadata.version(name)``; None when ``name`` is not installed."""
    try:
        return _plain_version(name)
    except _Ask:
        pass
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def normalize(name: str) -> str:
    """A distribution's name as ``importlib.metadata`` compares it (``Prepared.normalize``: PEP
    503's, with underscores)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _plain_version(name: str) -> str | None:
    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    if finders != [importlib.machinery.PathFinder]:
        raise _Ask
    wanted = normalize(name)
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:
            if os.path.exists(root):
                raise _Ask from None  # a file on the path: a zip archive's children count too
            continue
        if os.path.basename(entry).lower().endswith(".egg"):
            raise _Ask  # an egg directory: its EGG-INFO counts too
        for child in children:
            low = child.lower()
            if low.endswith(_INFO_SUFFIXES) and normalize(_dist_name(low)) == wanted:
                return _version_in(os.path.join(entry, child))
    return None


def _dist_name(low: str) -> str:
    return low.rpartition(".")[0].partition("-")[0]


def _version_in(info: str) -> str:
    for file in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(info, file), encoding="utf-8") as handle:
                text = handle.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            continue
        except (OSError, ValueError):  # ValueError: not UTF-8
            raise _Ask from None
        if text:
            return _version_header(text)
    raise _Ask  # an egg-info file, or no metadata at all


def _version_header(text: str) -> str:
    """The value of the first ``Version`` header of the header block (which ends at the first
    empty line), as the ``email`` parser gives it: after the colon, leading blanks dropped."""
    lines = text.split("\n")  # read with universal newlines, as importlib.metadata reads it
    for at, line in enumerate(lines):
        if not line:
            break
        if line.startswith(_CONTINUATION):
            continue
        header = _HEADER.match(line)
        if header is None:
            raise _Ask  # the parser would end the headers here, with a defect
        if header.group(1).lower() == "version":
            if at + 1 < len(lines) and lines[at + 1].startswith(_CONTINUATION):
                raise _Ask  # a folded value
            return line[header.end() :].lstrip(" \t")
    raise _Ask  # no Version header: importlib.metadata gives None
