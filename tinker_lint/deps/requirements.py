"""pip requirements files (``requirements*.txt``), read as pip reads them (pip/_internal/req/
req_file.py): lines joined at a trailing backslash, comments (``#`` at the start or after
whitespace) dropped, ``--hash`` and other per-requirement options cut off at the first word that
starts with ``-``. ``-r``/``--requirement`` and ``-c``/``--constraint`` files are followed, relative
to the file that names them (a constraint pins versions as surely as a requirement), and ``--pre``
anywhere in the tree lets every requirement in it admit pre-releases, as it does for pip.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from packaging.utils import canonicalize_name

from tinker_lint.deps.declared import Declared, is_relevant, parse_pep508
from tinker_lint.deps.known_bad import PACKAGES
from tinker_lint.io.files import read_utf8

_COMMENT = re.compile(r"(^|\s+)#.*$")
_INCLUDE = {"-r": "-r", "--requirement": "-r", "-c": "-c", "--constraint": "-c"}


@dataclass
class RequirementsTree:
    declared: list[Declared] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # every file read, for their noqa comments
    warnings: list[str] = field(default_factory=list)
    allow_prereleases: bool = False
    packages: frozenset[str] = PACKAGES  # the requirements read: on these packages


def read_requirements_tree(
    path: str, text: str, packages: frozenset[str] = PACKAGES
) -> RequirementsTree:
    tree = RequirementsTree(packages=packages)
    _read(path, text, tree, set())
    if tree.allow_prereleases:
        tree.declared = [replace(d, prereleases_allowed_by="`--pre`") for d in tree.declared]
    return tree


def _read(path: str, text: str, tree: RequirementsTree, visited: set[str]) -> None:
    visited.add(os.path.realpath(path))
    tree.texts[path] = text
    for number, line in _logical_lines(text):
        stripped = line.strip()
        if stripped.startswith("-"):
            _option(path, stripped, tree, visited)
            continue
        words = []
        for word in stripped.split(" "):  # pip's break_args_options
            if word.startswith("-"):
                break
            words.append(word)
        requirement_text = " ".join(words).strip()
        requirement = parse_pep508(requirement_text)
        if requirement is None or not is_relevant(requirement.name, tree.packages):
            continue
        tree.declared.append(
            Declared(
                name=canonicalize_name(requirement.name),
                text=requirement_text,
                path=path,
                line=number,
                col=len(line) - len(line.lstrip()) + 1,
                span=len(requirement_text),
                specifiers=(requirement.specifier,),
            )
        )


def _option(path: str, line: str, tree: RequirementsTree, visited: set[str]) -> None:
    try:
        words = shlex.split(line)
    except ValueError:
        return
    if not words:
        return
    first = words[0]
    if first == "--pre":
        tree.allow_prereleases = True
        return
    flag, _, value = first.partition("=")
    if flag in _INCLUDE:
        target = value or (words[1] if len(words) > 1 else "")
    elif first[:2] in ("-r", "-c") and len(first) > 2:
        target = first[2:]  # -rfile, as optparse allows
    else:
        return  # index options, -e, --hash on its own line...: no version decision
    if not target or re.match(r"^[a-z][a-z0-9+.-]*://", target, re.IGNORECASE):
        return  # a remote file is not the project's to fix here
    included = os.path.normpath(os.path.join(os.path.dirname(path), target))
    if os.path.realpath(included) in visited:
        return
    try:
        text = read_utf8(included)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8"
        tree.warnings.append(f"{path}: cannot read {target}: {reason or error}")
        return
    _read(included, text, tree, visited)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(number of the first physical line, the joined line without its comment), as pip's
    ``join_lines`` and ``ignore_comments``."""
    pending: list[str] = []
    first = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.endswith("\\") or _COMMENT.match(line):
            if _COMMENT.match(line):
                line = " " + line
            if pending:
                pending.append(line)
                yield first, _COMMENT.sub("", "".join(pending))
                pending = []
            else:
                yield number, _COMMENT.sub("", line)
        else:
            if not pending:
                first = number
            pending.append(line.strip("\\"))
    if pending:
        yield first, _COMMENT.sub("", "".join(pending))
