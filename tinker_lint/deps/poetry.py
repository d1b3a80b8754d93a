"""Poetry's version constraints, translated to PEP 440 specifier sets.

Poetry (poetry-core ``parse_constraint``) writes:

- ``^V`` (caret): ``>=V`` and below the next breaking release: bump the leftmost non-zero component
  of V, or the last one given when all are zero (``^2.13`` -> ``>=2.13,<3.0.0``; ``^0.2.3`` ->
  ``>=0.2.3,<0.3.0``; ``^0.0.3`` -> ``>=0.0.3,<0.0.4``; ``^0`` -> ``>=0,<1.0.0``);
- ``~V`` (tilde, not ``~=``): ``>=V`` and below the next minor, or the next major when V is one
  number (``~2.13.1`` -> ``>=2.13.1,<2.14.0``; ``~2`` -> ``>=2,<3.0.0``);
- a bare version or ``=V``: exactly V (``5.3.0`` -> ``==5.3.0``); ``2.13.*`` -> ``==2.13.*``;
  ``*`` or nothing: any version;
- PEP 440 operators as they are; several constraints joined by ``,`` or spaces (all must hold);
  alternatives joined by ``||`` (or ``|``).

Pre-releases follow the same rule as PEP 440's: admitted when a bound names one, or when the
dependency says ``allow-prereleases = true``.
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

_OPERATOR_SPACE = re.compile(r"(\^|~=|~|===|==|!=|>=|<=|>|<|=)\s+")
_ATOM = re.compile(r"(?P<op>\^|~=|~|===|==|!=|>=|<=|>|<|=)?(?P<version>.+)")


def poetry_specifiers(constraint: str) -> tuple[SpecifierSet, ...] | None:
    """The alternatives of a Poetry constraint, or None when it cannot be read."""
    alternatives = []
    for alternative in re.split(r"\|\|?", constraint):
        specifiers = []
        joined = _OPERATOR_SPACE.sub(r"\1", alternative.strip())
        for atom in re.split(r"[,\s]+", joined):
            if atom in ("", "*"):
                continue
            translated = _translate(atom)
            if translated is None:
                return None
            specifiers.append(translated)
        try:
            alternatives.append(SpecifierSet(",".join(specifiers)))
        except InvalidSpecifier:
            return None
    return tuple(alternatives)


def _translate(atom: str) -> str | None:
    match = _ATOM.fullmatch(atom)
    if match is None:
        return None
    operator, text = match.group("op") or "", match.group("version")
    if operator in ("", "="):
        return f"=={text}"
    if operator in ("^", "~"):
        try:
            version = Version(text)
        # InvalidVersion, or a release number longer than int() reads (4,300 digits).
        except ValueError:
            return None
        upper = _next_breaking(version) if operator == "^" else _next_tilde(version)
        return f">={text},<{upper}"
    return f"{operator}{text}"


def _next_breaking(version: Version) -> str:
    release = version.release
    major, minor = release[0], release[1] if len(release) > 1 else None
    if major > 0 or minor is None:
        return f"{major + 1}.0.0"
    if minor > 0 or len(release) < 3:
        return f"0.{minor + 1}.0"
    return f"0.0.{release[2] + 1}"


def _next_tilde(version: Version) -> str:
    release = version.release
    if len(release) == 1:
        return f"{release[0] + 1}.0.0"
    return f"{release[0]}.{release[1] + 1}.0"
