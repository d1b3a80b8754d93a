"""Known-bad dependency versions: the one table behind TNK301-TNK303 and ``tinker-lint doctor``.

Each entry says which versions of a package are bad (a ``packaging`` specifier set, pre-releases
included), which released versions those are (to test ranges against), and what to do instead.

"Admitted" follows PEP 440 as pip applies it: a specifier set admits a bad version when that version
satisfies it, and a pre-release satisfies it only when the set names a pre-release itself
(``pydantic>=2.13.0b1``) or the resolver is told to allow them (``--pre``, poetry's
``allow-prereleases``, uv's ``prerelease = "allow"``). So ``pydantic>=2`` does not admit 2.13.0b1.
The decision is made here, explicitly, because ``SpecifierSet.contains`` changed its pre-release
default in packaging 26.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import Version


@dataclass(frozen=True)
class KnownBad:
    code: str
    package: str  # canonical name
    # The bad versions. Tested with pre-releases allowed, so a set such as "<5.0" covers 4.x betas.
    bad: SpecifierSet
    # Only the pre-releases within ``bad`` are bad (PEP 440 has no specifier for "the 2.13
    # pre-releases": "<2.13.0" excludes them by design).
    prerelease_only: bool
    # Released versions in ``bad``; a range is tested against these and its own boundaries.
    known: tuple[str, ...]
    problem: str  # what goes wrong, one clause
    short: str  # the problem in a few words, for the finding's one-line message
    fix: str  # what to write in a dependency file instead
    install_fix: str  # the command that repairs an installed environment
    # TNK302: a range is resolved to the newest version, so only an exact pin (or a lock) decides 5.3.0.
    exact_pins_only: bool = False
    # TNK303: bad only for projects whose code names a Qwen VL model.
    needs_qwen_vl: bool = False

    def is_bad(self, version: Version) -> bool:
        if self.prerelease_only and not version.is_prerelease:
            return False
        return self.bad.contains(version, prereleases=True)

    def admitted_by(
        self, specifier: SpecifierSet, allow_prereleases: bool = False
    ) -> Version | None:
        """The first bad version ``specifier`` admits, or None."""
        if self.exact_pins_only and not is_exact_pin(specifier):
            return None
        allow = allow_prereleases or names_prerelease(specifier)
        for candidate in _candidates(self, specifier):
            if candidate.is_prerelease and not allow:
                continue
            if self.is_bad(candidate) and specifier.contains(candidate, prereleases=True):
                return candidate
        return None


KNOWN_BAD: tuple[KnownBad, ...] = (
    KnownBad(
        code="TNK301",
        package="pydantic",
        bad=SpecifierSet("==2.13.*"),
        prerelease_only=True,
        known=("2.13.0b1", "2.13.0b2", "2.13.0b3"),  # every 2.13 pre-release on PyPI
        problem="pydantic 2.13 pre-releases make `model_dump()` very slow on large payloads, "
        "which stalls `forward_backward` submission for minutes",
        short="pre-release with a slow `model_dump()`",
        fix="require a stable pydantic (`pydantic<2.13` or `pydantic>=2.13.0`)",
        install_fix='pip install "pydantic>=2.13.0"',
    ),
    KnownBad(
        code="TNK302",
        package="transformers",
        bad=SpecifierSet("==5.3.0"),
        prerelease_only=False,
        known=("5.3.0",),
        problem="transformers 5.3.0 loads the wrong tokenizer class for DeepSeek V2/V3 "
        "(fixed in 5.3.1)",
        short="wrong DeepSeek V2/V3 tokenizer",
        fix="pin `transformers>=5.3.1` (or exclude it: `!=5.3.0`)",
        install_fix='pip install "transformers>=5.3.1"',
        exact_pins_only=True,
    ),
    KnownBad(
        code="TNK303",
        package="transformers",
        bad=SpecifierSet("<5.0"),
        prerelease_only=False,
        # The last minor releases of 4.x; a range below them is caught through its own bounds.
        known=("4.0.0", "4.45.0", "4.49.0", "4.51.3", "4.55.4", "4.56.2", "4.57.6"),
        problem="transformers before 5.0 miscounts image tokens in `Qwen2VLImageProcessor`, "
        "used for Qwen VL models",
        short="miscounts Qwen VL image tokens",
        fix="require `transformers>=5,!=5.3.0`",
        install_fix='pip install "transformers>=5.3.1"',
        needs_qwen_vl=True,
    ),
)

BY_CODE: dict[str, KnownBad] = {entry.code: entry for entry in KNOWN_BAD}


# A finding's message and help, as a rule's templates (``rules/base.py``): ``{what}`` is the
# requirement or lock entry, ``{evidence}`` the project's use that makes it bad, ``{then}`` what
# follows the remedy (", then lock again").
def message_template(code: str) -> str:
    """What is declared and, in a few words, what is wrong with it."""
    return "{what}: " + BY_CODE[code].short


def help_template(code: str) -> str:
    """The problem in full, the project's evidence and the remedy."""
    entry = BY_CODE[code]
    return entry.problem + "{evidence}; " + entry.fix + "{then}"


PACKAGES: frozenset[str] = frozenset(entry.package for entry in KNOWN_BAD)


def entries_for(name: str) -> tuple[KnownBad, ...]:
    from packaging.utils import canonicalize_name  # imports packaging.tags: only when asked

    canonical = canonicalize_name(name)
    return tuple(entry for entry in KNOWN_BAD if entry.package == canonical)


def names_prerelease(specifier: SpecifierSet) -> bool:
    """Whether the set names a pre-release (PEP 440: then pre-releases are admitted); ``!=`` does
    not count, as in pip."""
    for spec in specifier:
        if spec.operator == "!=":
            continue
        version = _version(spec.version.removesuffix(".*"))
        if version is not None and version.is_prerelease:
            return True
    return False


def is_exact_pin(specifier: SpecifierSet) -> bool:
    return any(
        spec.operator == "===" or (spec.operator == "==" and not spec.version.endswith(".*"))
        for spec in specifier
    )


def parse_specifier(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    # InvalidVersion, or a release number longer than int() reads (4,300 digits).
    except ValueError:
        return None


def _candidates(entry: KnownBad, specifier: SpecifierSet) -> list[Version]:
    """Versions to test: the entry's released bad versions (newest first: what a resolver would
    pick), then the boundaries of both sets and the versions just past them. The intersection of
    two ranges starts at one of those boundaries, so a range that admits some bad version admits
    one of these (barring a chain of ``!=``)."""
    known = sorted((Version(v) for v in entry.known), reverse=True)
    derived = {Version("0")}
    for spec in (*specifier, *entry.bad):
        derived.update(_around(spec))
    # Shorter versions first, so a message quotes 4.40.1 rather than 4.40.0.0.1.
    return known + sorted(derived - set(known), key=lambda v: (len(v.release), v))


def _around(spec: Specifier) -> Iterator[Version]:
    version = _version(spec.version.removesuffix(".*"))
    if version is None:
        return
    yield version
    release = version.release
    for extra in ((1,), (0, 1), (0, 0, 1)):
        yield Version(".".join(map(str, (*release, *extra))))
    for index in range(len(release)):
        bumped = (*release[:index], release[index] + 1)
        yield Version(".".join(map(str, bumped)))
    if version.pre is not None:
        letter, number = version.pre
        yield Version(f"{version.base_version}{letter}{number + 1}")


def first_admitted(
    name: str, specifiers: Iterable[SpecifierSet], allow_prereleases: bool = False
) -> Iterator[tuple[KnownBad, Version]]:
    """Each entry for ``name`` that one of ``specifiers`` (alternatives) admits, with the version."""
    alternatives = tuple(specifiers)
    for entry in entries_for(name):
        for specifier in alternatives:
            version = entry.admitted_by(specifier, allow_prereleases)
            if version is not None:
                yield entry, version
                break
