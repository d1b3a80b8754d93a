"""A finding, as every reporter and front door sees it."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import total_ordering

# How safe a fix is, as in ruff. Defined here, not beside the fix plans (``tinker_lint.fix.plan``),
# so that reporting diagnostics read from the cache does not import libcst.
SAFE = "safe"  # keeps what the program does (up to timing): applied by ``--fix``
UNSAFE = "unsafe"  # may change behaviour in a case we cannot rule out: needs ``--unsafe-fixes``


def is_applicable(applicability: str, unsafe_fixes: bool) -> bool:
    return applicability == SAFE or (unsafe_fixes and applicability == UNSAFE)


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions."""

    content: str
    location: tuple[int, int]
    end_location: tuple[int, int]


@dataclass(frozen=True)
class Fix:
    message: str
    edits: tuple[Edit, ...] = ()
    applicability: str = "safe"  # "safe" | "unsafe", as in ruff


@total_ordering
@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int  # 1-based
    col: int  # 1-based, as ruff and flake8 print it
    code: str
    message: str
    end_line: int = 0
    end_col: int = 0
    fix: Fix | None = field(default=None, compare=False)
    # A notebook's code cell (1-based among its cells, as ruff counts them): ``line`` and the
    # positions are then the cell's own. None: a plain file.
    cell: int | None = None
    # Where a cell's finding is in the notebook's own JSON text (start line, column, end line,
    # column; 1-based): the GitHub and SARIF reporters point there, as their viewers show the
    # file, not the cells. None: a plain file (``line`` is the file's), or not known.
    file_range: tuple[int, int, int, int] | None = field(default=None, compare=False)
    # Why it matters, the evidence and the fix (the rule's ``help``): the ``text`` report's
    # ``= help:`` line; the one-line formats keep to ``message``. Not compared: order and
    # deduplication stay those of the message.
    help: str = field(default="", compare=False)

    def __lt__(self, other: Diagnostic) -> bool:
        return self._order() < other._order()

    def _order(self) -> tuple[str, int, int, int, str, str, int, int]:
        # A cell's lines come after the lines of the cells before it.
        return (
            self.path,
            self.cell or 0,
            self.line,
            self.col,
            self.code,
            self.message,
            self.end_line,
            self.end_col,
        )

    @property
    def url(self) -> str:
        return docs_url(self.code)


DOCS_BASE_URL = "https://github.com/tinker-lint/tinker-lint/blob/main/"


def docs_url(code: str) -> str:
    return f"{DOCS_BASE_URL}docs/rules/{code}.md"
