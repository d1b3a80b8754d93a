"""Where values sit in a TOML file, which ``tomllib`` does not say.

``tomllib`` reads the values; this scanner walks the same text once and records, for every string
value, the path it has in ``tomllib``'s data (``("project", "dependencies", 0)`` for the first
dependency, ``("package", 3, "version")`` for the fourth ``[[package]]``'s) with its 1-based line and
column, and
the position of every key and table header. It trusts that ``tomllib`` accepted the file: it does not
validate, and on text it does not understand it skips ahead rather than fail.
"""

from __future__ import annotations

import bisect
import re

from tinker_lint.io import toml as tomllib  # tomllib, nesting included

Path = tuple[str | int, ...]

_SPACE = re.compile(r"(?:[ \t\r\n]|#[^\n]*)*")
_INLINE_SPACE = re.compile(r"[ \t]*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"{3,5}', re.DOTALL)
_ML_LITERAL = re.compile(r"'''(?:[^']|'(?!''))*'{3,5}", re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]\}#]+")
_REST_OF_LINE = re.compile(r"[^\n]*")


class TomlPositions:
    def __init__(self, text: str) -> None:
        self._text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.strings: dict[Path, tuple[str, int, int]] = {}
        self.keys: dict[Path, tuple[int, int]] = {}
        self._array_tables: dict[tuple[str, ...], int] = {}
        self._scan()

    def string(self, path: Path, value: str) -> tuple[int, int] | None:
        """Position of the string ``value`` at ``path`` (None if the text there differs)."""
        found = self.strings.get(path)
        if found is None or found[0] != value:
            return None
        return found[1], found[2]

    def key(self, path: Path) -> tuple[int, int] | None:
        return self.keys.get(path)

    # -- scanning ---------------------------------------------------------------------------

    def _position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    def _skip(self, pos: int, pattern: re.Pattern[str] = _SPACE) -> int:
        """Past what ``pattern`` matches at ``pos``: the patterns skipped can all match nothing."""
        match = pattern.match(self._text, pos)
        assert match is not None
        return match.end()

    def _scan(self) -> None:
        text, pos = self._text, 0
        table: Path = ()
        while True:
            pos = self._skip(pos)
            if pos >= len(text):
                return
            start = pos
            try:
                if text.startswith("[[", pos):
                    keys, pos = self._key(pos + 2)
                    table = self._table(keys, array=True)
                    pos = text.index("]]", pos) + 2
                elif text[pos] == "[":
                    keys, pos = self._key(pos + 1)
                    table = self._table(keys, array=False)
                    pos = text.index("]", pos) + 1
                else:
                    keys, pos = self._key(pos)
                    path = (*table, *keys)
                    self.keys.setdefault(path, self._position(start))
                    pos = self._skip(pos, _INLINE_SPACE)
                    if not text.startswith("=", pos):
                        raise ValueError
                    pos = self._value(pos + 1, path)
                    continue
                self.keys.setdefault(table, self._position(start))
            except ValueError:
                # Not understood (tomllib accepted it): resume on the next line.
                pos = self._skip(max(pos, start + 1), _REST_OF_LINE)

    def _table(self, keys: tuple[str, ...], array: bool) -> Path:
        """The data path of a table header: arrays of tables get their current index."""
        if array:
            self._array_tables[keys] = self._array_tables.get(keys, -1) + 1
            for nested in [k for k in self._array_tables if k[: len(keys)] == keys and k != keys]:
                del self._array_tables[nested]  # a new element starts its nested arrays afresh
        path: list[str | int] = []
        for end in range(1, len(keys) + 1):
            path.append(keys[end - 1])
            if keys[:end] in self._array_tables:
                path.append(self._array_tables[keys[:end]])
        return tuple(path)

    def _key(self, pos: int) -> tuple[tuple[str, ...], int]:
        text, parts = self._text, list[str]()
        while True:
            pos = self._skip(pos, _INLINE_SPACE)
            match = _BARE_KEY.match(text, pos)
            if match is not None:
                parts.append(match.group())
            else:
                match = _BASIC.match(text, pos) or _LITERAL.match(text, pos)
                if match is None:
                    raise ValueError
                parts.append(_decode(match.group()))
            pos = self._skip(match.end(), _INLINE_SPACE)
            if not text.startswith(".", pos):
                return tuple(parts), pos
            pos += 1

    def _value(self, pos: int, path: Path) -> int:
        text = self._text
        pos = self._skip(pos, _INLINE_SPACE)
        for pattern, quote in ((_ML_BASIC, 3), (_ML_LITERAL, 3), (_BASIC, 1), (_LITERAL, 1)):
            match = pattern.match(text, pos)
            if match is not None:
                raw = match.group()
                line, col = self._position(pos + quote)
                self.strings.setdefault(path, (_decode(raw), line, col))
                return match.end()
        if text.startswith("[", pos):
            pos, index = pos + 1, 0
            while True:
                pos = self._skip(pos)
                if pos >= len(text):
                    raise ValueError
                if text[pos] == "]":
                    return pos + 1
                if text[pos] == ",":
                    pos += 1
                    continue
                pos = self._value(pos, (*path, index))
                index += 1
        if text.startswith("{", pos):
            pos += 1
            while True:
                pos = self._skip(pos)
                if pos >= len(text):
                    raise ValueError
                if text[pos] == "}":
                    return pos + 1
                if text[pos] == ",":
                    pos += 1
                    continue
                start = pos
                keys, pos = self._key(pos)
                self.keys.setdefault((*path, *keys), self._position(start))
                pos = self._skip(pos, _INLINE_SPACE)
                if not text.startswith("=", pos):
                    raise ValueError
                pos = self._value(pos + 1, (*path, *keys))
        match = _SCALAR.match(text, pos)
        if match is None:
            raise ValueError
        return match.end()


def _decode(raw: str) -> str:
    """A TOML string literal's value; the rare escaped or multi-line ones are decoded by tomllib."""
    if raw.startswith("'") and not raw.startswith("'''"):
        return raw[1:-1]
    if raw.startswith('"') and not raw.startswith('"""') and "\\" not in raw:
        return raw[1:-1]
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    return value if isinstance(value, str) else raw
