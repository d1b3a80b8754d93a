"""A version decision found in a dependency file, whatever its format: a requirement (one or more
alternative specifier sets) or a lock entry (one version), with where it is written."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from tinker_lint.deps.known_bad import PACKAGES


@dataclass(frozen=True)
class Declared:
    name: str  # canonical
    text: str  # as written, quoted in the message
    path: str
    line: int  # 1-based
    col: int  # 1-based, where the requirement text (or the locked version) starts
    span: int  # characters from there that the diagnostic covers (on the same line)
    specifiers: tuple[SpecifierSet, ...] = ()  # a requirement: admitted if any alternative admits
    version: Version | None = None  # a lock entry
    # What tells the resolver to take pre-releases for this requirement ("`--pre`"), if anything.
    prereleases_allowed_by: str = ""

    @property
    def is_lock(self) -> bool:
        return self.version is not None


def is_relevant(name: str, packages: frozenset[str] = PACKAGES) -> bool:
    """Whether ``name`` is one of ``packages`` (canonical names): by default the packages the
    known-bad table judges; ``deps.tinker_pin`` asks for ``tinker``."""
    return canonicalize_name(name) in packages


def parse_pep508(text: str) -> Requirement | None:
    """A PEP 508 requirement that constrains versions, or None: for what is not one (a path, a
    URL, a typo) and for a direct reference (``name @ url``), which names no version. Extras and
    environment markers are parsed and then ignored: a bad version admitted in some environments
    is admitted."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    return None if requirement.url else requirement
