"""The project a file belongs to: its modules, found from import names, and what their functions
do (``model/analyses/summaries.py``), each module summarised once per process.

A module of the project is a file under the project root (the nearest directory above the linted
file with ``pyproject.toml``, ``setup.cfg``, ``setup.py``, ``.git`` or requirements; else the
file's own directory) that an import names: ``from .steps import f``, ``from pkg.steps import f``,
``import pkg.steps as steps``. Names are looked up as Python would find them from the file: in its
own directory (a script's ``sys.path[0]``), the directories above it up to the root (the top of its
package), and ``src/``. Anything else (the standard library, installed packages) is not the
project's: it stays unknown.

Summarising a module parses it (CPython first, libcst only for one that may submit or wait) and
builds its model, whose own calls of other project modules come back here, one module further
down: a linted file's imports are asked with a budget of ``MAX_DEPTH`` modules, theirs with one
less, and a module asked with none left answers nothing (the cut). That bounds chains and import
cycles alike (a cycle is followed round until the budget is spent), and makes every answer a
function of the module, its budget and the files below it, never of what was asked before in the
process (issue 29: the findings of a file do not depend on the run's other files, their order, the
cache or the jobs). Each answer is kept by budget; one made without meeting a cut is the module's
complete answer, kept once for every budget at least as deep as the chain it needed (``needs``).
Every file read is recorded with the SHA-256 of its bytes, so a file's findings can be cached under
the contents of the project files they depend on (``dependencies``).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from tinker_lint.deps.kinds import marks_a_project
from tinker_lint.io.files import (
    DecodeError,
    decode_source,
    is_listing_key,
    list_directory,
    listing_answer,
    listing_key,
    merged_listings,
)
from tinker_lint.model.facts import cookbook_api
from tinker_lint.model.facts.sdk import Role
from tinker_lint.prefilter.mentions import may_concern_tinker
from tinker_lint.prefilter.needs import TextFacts
from tinker_lint.prefilter.sketch import HelperNames, sketch
from tinker_lint.prefilter.sketch import dotted as dotted_name

if TYPE_CHECKING:  # libcst is imported only when a helper module is summarised
    from libcst import Module

    from tinker_lint.model.analyses.helpers import Helpers
    from tinker_lint.model.analyses.summaries import ClassSummary, Summary
    from tinker_lint.model.reuse import RecordingView

MAX_DEPTH = 4
_REQUESTS = frozenset({Role.TRAIN, Role.SAMPLE, Role.SAVE})
# Bigger files are generated data, not helpers (the engine does not analyse them either).
_MAX_HELPER_BYTES = 2_000_000
# A module that may submit or wait: the words a summary needs (else it is summarised from its
# imports alone, without libcst).
_MAY_MATTER = re.compile(
    r"\b(?:tinker|result|await|asyncio|forward_backward\w*|optim_step\w*|sample\w*|"
    r"compute_logprobs\w*|save_\w+)\b"
)
# The ``from`` part just before an ``import`` keyword on its line.
_FROM = re.compile(r"\bfrom[ \t]+(\.*[\w.]*)[ \t]+$")
_NAME = re.compile(r"[\w.]+")
# How many times, on average, the modules of one import cycle are walked at most before their
# sketches are taken as they stand (a walk can only add names: cycles settle in two or three).
_MAX_WALKS = 20


def imported_modules(text: str) -> set[str]:
    """Every module name an import statement of ``text`` may name, as written (``.steps``), and
    more: after each ``import`` keyword anywhere (strings and comments too), each dotted name up
    to the end of its line (a bracketed list whole), also under the ``from`` module before it on
    its line. A sound stand-in for ``_imports`` on CPython's tree, read without parsing."""
    if "\\\n" in text:
        text = text.replace("\\\n", " ")  # a statement continued by backslashes is one line
    found: set[str] = set()
    at = text.find("import")
    while at >= 0:
        start = at + len("import")
        # A whole word (``re``'s ``\b`` makes the search 30 times slower: a literal is found fast).
        whole = (at == 0 or not _is_word(text[at - 1])) and not _is_word(text[start : start + 1])
        if whole:
            while text.startswith((" ", "\t"), start):
                start += 1
            end = text.find(")" if text.startswith("(", start) else "\n", start)
            names = _NAME.findall(text, start, end if end >= 0 else len(text))
            before = _FROM.search(text, text.rfind("\n", 0, at) + 1, at)
            if before is None:
                found.update(names)
            else:
                module = before.group(1)
                found.add(module)
                glue = "" if module.strip(".") == "" else "."
                found.update(f"{module}{glue}{name}" for name in names)
        at = text.find("import", at + 1)
    return found


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


@dataclass
class ModuleFacts:
    """What one module of the project offers to the others (plain data)."""

    path: str
    functions: dict[str, Summary] = field(default_factory=dict)
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    # Every project file these facts were made from (this one included): path -> SHA-256.
    depends: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModuleSketch:
    """A project module as CPython's tree shows it: its functions (and methods) that submit or
    wait, by name; its classes with their bases (qualified); the project names it re-exports."""

    helpers: HelperNames
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    # Classes whose instances, called (``self.model(x)``), may submit or wait: those defining a
    # ``__call__`` that does, and the bases they override it for (an interface's annotation).
    callable_classes: frozenset[str] = frozenset()
    # The project files it was made from (this one, and the modules it imports): path -> SHA-256.
    depends: dict[str, str] = field(default_factory=dict)

    @property
    def matters(self) -> bool:
        return bool(self.helpers)

    def may_matter(self, name: str) -> bool:
        """Whether the function or method ``name`` may submit or wait (then its summary is worth
        libcst's parse of the module)."""
        return name in self.helpers.submits or name in self.helpers.waits


_EMPTY_SKETCH = ModuleSketch(HelperNames())


class Source:
    """A project file as read once per state (its stat), and what its text says before anything
    is parsed: the SHA-256 of its bytes (None: not readable); whether it is text a helper may be
    (not too big, decodable); the module names its imports may name (``imported_modules``);
    whether it names Tinker; whether it has a word a wait needs. The text itself is not kept (a
    run reads thousands of modules this way): a sketch reads it again (``ProjectIndex.text``)."""

    __slots__ = ("digest", "is_text", "may_matter", "names", "names_tinker", "stat")

    def __init__(self, stat: Stat, digest: str | None, text: str | None) -> None:
        self.stat = stat
        self.digest = digest
        self.is_text = text is not None
        self.names: frozenset[str] = frozenset(imported_modules(text)) if text else frozenset()
        # What any function of it needs to submit a request itself (``mentions``), or to call
        # tinker-cookbook's API that does (``facts/cookbook_api.py``).
        self.names_tinker = text is not None and (
            may_concern_tinker(text) or cookbook_api.imports_any(self.names)
        )
        self.may_matter = text is not None and _MAY_MATTER.search(text) is not None


@dataclass(frozen=True)
class _Node:
    """A module on its way to its sketch: its bytes, its own view, its text and what CPython's
    tree of it imports (``_imports``, in its order; None: nothing in it can matter, or it does not
    parse), and the project files it imports with the names it takes from each (name, local)."""

    source: Source
    view: FileView
    text: str | None
    listed: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None
    imports: tuple[tuple[str, list[tuple[str, str]]], ...]


class ModuleStore(Protocol):
    """Where the index keeps what it made between processes and runs (``run.cache.IndexStore``):
    plain JSON values under keys the index makes of everything a value is made from, so that a
    value read is the one the index would make again. A value that cannot be read is None."""

    def get(self, key: str) -> Any: ...

    def put(self, key: str, value: Any) -> None: ...


@dataclass(frozen=True, eq=False)
class Reach:
    """What one strongly connected part of the text import graph (an import cycle, or one
    module) reaches: whether a module of it, or of a part below, names Tinker; if none does, the
    SHA-256 of its own modules and the parts below it (all of them are what the answer read)."""

    tinker: bool
    own: dict[str, str] = field(default_factory=dict)
    below: tuple[Reach, ...] = ()

    @staticmethod
    def read(parts: Iterable[Reach], into: dict[str, str]) -> None:
        """Every file the answers of ``parts`` were read from, into ``into``: path -> SHA-256."""
        seen: set[int] = set()
        stack = list(parts)
        while stack:
            part = stack.pop()
            if id(part) not in seen:
                seen.add(id(part))
                into.update(part.own)
                stack.extend(part.below)


Stat = tuple[int, int] | None
_UNREAD: Stat = (-2, -2)  # no stat is: (mtime, size) are never negative, a buffer's mtime is -1
Made = TypeVar("Made")


@dataclass
class _Answers(Generic[Made]):
    """What one module answered (a sketch or facts), for the file's ``stat`` it was made from:
    its complete answer (made without meeting a cut anywhere below) with the budget it needs,
    and by budget, those that met a cut (each a function of the module and the budget alone)."""

    stat: Stat
    complete: Made | None = None
    needs: int = 0  # 0: no complete answer yet
    partial: dict[int, Made] = field(default_factory=dict)

    def made_from(self, path: str) -> bool:
        """Whether any of these answers was made from the file at ``path``."""
        kept = [self.complete] if self.needs else []
        return any(path in _depends(made) for made in [*kept, *self.partial.values()])


def _drop(table: dict[str, _Answers[Made]], absolute: str) -> None:
    """Forget the answers of the module at ``absolute`` and of every module made from it."""
    for key in [k for k, answers in table.items() if k == absolute or answers.made_from(absolute)]:
        del table[key]


class ProjectIndex:
    """The modules of the projects of the files linted in one process, summarised once each."""

    def __init__(self) -> None:
        # By absolute path, each with the file's (mtime, size) when it was made.
        self._facts: dict[str, _Answers[ModuleFacts | None]] = {}
        self._roots: dict[str, str] = {}
        # By absolute path, each with its file's stat: made once per module (``_sketch_from``).
        self._sketches: dict[str, tuple[Stat, ModuleSketch]] = {}
        self._sources: dict[str, Source] = {}
        self._reaches: dict[str, tuple[Stat, Reach]] = {}  # by path, with its stat
        self._module_views: dict[tuple[str, str], FileView] = {}
        self._text_imports: dict[tuple[str, str], tuple[Source, tuple[str, ...]]] = {}
        # Each module's trees (CPython's, libcst's), by path, with the SHA-256 of what was parsed.
        self._trees: dict[str, tuple[str, ast.Module | None]] = {}
        # libcst's, with the SHA-256 of the bytes and of the text (``kept_module``) parsed.
        self._modules: dict[str, tuple[str, str, Module | None]] = {}
        self._requests: dict[str, tuple[str, bool]] = {}
        # (directory, module) -> its file, and the listings read to find it (``_find_module_file``)
        self._files: dict[tuple[str, str], tuple[str | None, tuple[tuple[str, str], ...]]] = {}
        self._listings: dict[str, frozenset[str]] = {}  # directory -> its files and folders/
        # An editor's unsaved text of a file (the language server), read in place of its bytes on
        # disk: absolute path -> (the bytes, a number that changes with each new text).
        self._buffers: dict[str, tuple[bytes, int]] = {}
        self._edits = 0
        # What the index did, for the tests that keep it from doing more than it must: CPython
        # parses of modules, sketch walks, models of modules (facts); and what it read from and
        # wrote to its store.
        self.counts: Counter[str] = Counter()
        # Where what it makes is kept between processes (None: nowhere). Set by the front door
        # (the runner's results cache, the flake8 plugin), for the lints that follow.
        self.store: ModuleStore | None = None

    # --- what changed (a long-lived index: the language server) ------------------------------
    def set_buffer(self, path: str, raw: bytes | None) -> None:
        """Read ``raw`` for the file at ``path`` from now on, as an editor holds it unsaved (None:
        its bytes on disk again); what was made from the file, in any module, is made again."""
        absolute = os.path.abspath(path)
        if raw is None:
            self._buffers.pop(absolute, None)
        else:
            self._edits += 1
            self._buffers[absolute] = (raw, self._edits)
        # Where modules are found is not looked up again: that asks the disk (``_find_module_file``),
        # which a buffer does not change. It cost ~100 lookups per lint of an edited rl/train.py.
        self._drop_made_from(absolute)

    def forget(self, path: str) -> None:
        """The file at ``path`` changed, appeared or went away on disk: drop its facts and
        sketches and those of every module made from it. Each entry is keyed by its own file's
        stat only, so a module whose helper changed would otherwise keep the helper's old
        summary. Where modules are found is looked up again (a new file may now be the one)."""
        self._drop_made_from(os.path.abspath(path))
        self._files.clear()
        self._listings.clear()
        self._module_views.clear()
        self._text_imports.clear()

    def _drop_made_from(self, absolute: str) -> None:
        _drop(self._facts, absolute)
        for path in [
            p
            for p, (_, made) in self._sketches.items()
            if p == absolute or absolute in made.depends
        ]:
            del self._sketches[path]
        self._sources.pop(absolute, None)
        self._reaches.clear()  # what a module reaches may pass through any file
        self._trees.pop(absolute, None)
        self._modules.pop(absolute, None)
        self._requests.pop(absolute, None)

    def is_file(self, path: str) -> bool:
        """``os.path.isfile``, from one listing per directory (a module name is looked for in
        several directories, as two files each: one listing instead of thousands of stats)."""
        directory, _, name = path.rpartition(os.sep)  # a path made of a directory and a name
        return name in self.listing(directory or os.sep)

    def listing(self, directory: str) -> frozenset[str]:
        """The names of the files in ``directory``, and of its directories followed by a
        separator (none if it is not one), as first seen in this run (``look_again`` forgets
        them)."""
        found = self._listings.get(directory)
        if found is None:
            found = self._listings[directory] = list_directory(directory)
        return found

    def look_again(self) -> None:
        """Files may have appeared or gone since the directories were listed (an editor's
        session, where no watcher need tell): list them again when next asked."""
        self._listings.clear()

    def _read(self, path: str) -> bytes:
        """A project file's bytes (at most one more than a helper may have): an editor's unsaved
        text if it has one, else the disk's. Raises ``OSError``."""
        buffered = self._buffers.get(path)
        if buffered is not None:
            return buffered[0][: _MAX_HELPER_BYTES + 1]
        with open(path, "rb") as handle:
            return handle.read(_MAX_HELPER_BYTES + 1)

    def _stat(self, path: str) -> Stat:
        buffered = self._buffers.get(path)
        if buffered is not None:
            return -1, buffered[1]  # no file's stat: (mtime, size) are never negative
        return _stat(path)

    def view(self, path: str) -> FileView:
        """What the file at ``path`` sees of its project."""
        absolute = os.path.abspath(path)
        directory = os.path.dirname(absolute)
        root = self._roots.get(directory)
        if root is None:
            root = self._roots[directory] = _project_root(absolute)
        return FileView(self, path, absolute, root)

    # --- modules -----------------------------------------------------------------------------
    def source(self, path: str, view: FileView) -> Source:
        """A project file's bytes as the cheap passes read them, once per state (``view``'s stat
        of it): its SHA-256, its text, what the text names."""
        stat = view.stat(path)
        kept = self._sources.get(path)
        if kept is not None and kept.stat == stat:
            return kept
        try:
            raw = self._read(path)
        except OSError:
            made = Source(stat, None, None)
        else:
            text: str | None = None
            if len(raw) <= _MAX_HELPER_BYTES:  # bigger: generated data, not helpers
                with contextlib.suppress(DecodeError):
                    text = decode_source(raw).text
            made = Source(stat, hashlib.sha256(raw).hexdigest(), text)
        self._sources[path] = made
        return made

    def _text(self, path: str, source: Source) -> str | None:
        """The text of a module read before (``source``), read again; None if its bytes are not
        those read then (changed meanwhile: what was made of them stands for this run)."""
        try:
            raw = self._read(path)
        except OSError:
            return None
        if hashlib.sha256(raw).hexdigest() != source.digest:
            return None
        try:
            return decode_source(raw).text
        except DecodeError:
            return None

    def module_view(self, path: str, root: str) -> FileView:
        """A module's own view of the project: where the names it imports are found from its
        directory. It reads no stat (the file being linted asks those, so one lint sees one
        state): it is kept for the process."""
        view = self._module_views.get((path, root))
        if view is None:
            view = self._module_views[(path, root)] = FileView(self, path, path, root)
        return view

    def text_imports(self, path: str, view: FileView, text: str | None = None) -> tuple[str, ...]:
        """The project files a module's text imports (``imported_modules``: every import
        statement the text may hold, and more), found from the module's own directory. ``text``:
        the module's text as the caller has it (the file being linted), else read here."""
        module_view = self.module_view(path, view.root)
        if text is not None:
            return _files_named(module_view, imported_modules(text))
        source = self.source(path, view)
        key = (path, view.root)
        kept = self._text_imports.get(key)
        if kept is None or kept[0] is not source:
            kept = self._text_imports[key] = (source, _files_named(module_view, source.names))
        return kept[1]

    def reach(self, path: str, view: FileView) -> Reach:
        """Whether the module at ``path``, or a module its text imports however deep, names
        Tinker (``Source.names_tinker``): made once per module, a part of the graph at a time."""
        kept = self._reaches.get(path)
        if kept is None or kept[0] != view.stat(path):

            def reached(node: str) -> bool:
                found = self._reaches.get(node)
                return found is not None and found[0] == view.stat(node)

            for part in strongly_connected(
                path, lambda node: self.text_imports(node, view), reached
            ):
                members = set(part)
                below = {
                    id(made): made
                    for member in part
                    for file in self.text_imports(member, view)
                    if file not in members
                    for made in [self._reaches[file][1]]
                }
                sources = [self.source(member, view) for member in part]
                if any(source.names_tinker for source in sources) or any(
                    made.tinker for made in below.values()
                ):
                    made = Reach(True)
                else:
                    own = {m: s.digest for m, s in zip(part, sources, strict=True) if s.digest}
                    for member in part:  # where their imports were looked for
                        own.update(_listings(self.module_view(member, view.root).received))
                    made = Reach(False, own, tuple(below.values()))
                for member in part:
                    self._reaches[member] = (view.stat(member), made)
            kept = self._reaches[path]
        return kept[1]

    def module_sketch(self, path: str, view: FileView) -> ModuleSketch:
        """What CPython's tree of a project module says its functions do (by name), with the
        helpers it imports in turn, however deep: made once per module (``_sketch_from``)."""
        kept = self._sketches.get(path)
        if kept is None or kept[0] != view.stat(path):
            self._sketch_from(path, view)
            kept = self._sketches[path]
        made = kept[1]
        view.received.update(made.depends)
        return made

    def _sketch_from(self, start: str, view: FileView) -> None:
        """Sketch ``start`` and each module it imports, in turn, that has no sketch yet: the
        import graph's strongly connected parts (an import cycle, or one module) in Tarjan's
        order, each once the parts it imports are sketched. So every module is sketched once,
        with all it imports in view, and its sketch is a function of the module and the files
        below it, whoever asked first (issue 29)."""
        nodes: dict[str, _Node] = {}

        def imports(path: str) -> list[str]:
            node = nodes[path] = self._node(path, view)
            return [file for file, _ in node.imports]

        def sketched(path: str) -> bool:
            kept = self._sketches.get(path)
            return kept is not None and kept[0] == view.stat(path)

        for part in strongly_connected(start, imports, sketched):
            self._settle(part, nodes, view)

    def _settle(self, part: list[str], nodes: dict[str, _Node], view: FileView) -> None:
        """Sketch the modules of one strongly connected part of the import graph: each walked
        with what the others are found to do so far, from nothing, until none finds more (the
        least fixpoint: a cycle of helpers that only call each other submits nothing)."""
        current = {path: _EMPTY_SKETCH for path in part}

        def sketch_of(path: str) -> ModuleSketch:
            return current[path] if path in current else self._sketches[path][1]

        # Walked again only when a module it imports found more (each walk can only add names).
        importers: dict[str, list[str]] = {path: [] for path in part}
        for path in part:
            for file, _ in nodes[path].imports:
                if file in importers and path not in importers[file]:
                    importers[file].append(path)
        queue = deque(path for path in part if nodes[path].listed is not None)
        queued = set(queue)
        walks = 0
        while queue and walks < _MAX_WALKS * len(part):
            path = queue.popleft()
            queued.discard(path)
            walks += 1
            made = self._walked(nodes[path], sketch_of)
            if made != current[path]:
                current[path] = made
                for importer in importers[path]:
                    if importer not in queued:
                        queued.add(importer)
                        queue.append(importer)
        depends: dict[str, str] = {}
        for path in part:
            node = nodes[path]
            if node.source.digest is not None:
                depends[path] = node.source.digest
            depends.update(_listings(node.view.received))  # where its imports were looked for
            for file, _ in node.imports:
                depends.update(sketch_of(file).depends)
        for path in part:
            made = current[path]
            if nodes[path].source.digest is not None:  # an unreadable file is made from nothing
                made = ModuleSketch(
                    made.helpers, made.classes, made.aliases, made.callable_classes, depends
                )
            self._sketches[path] = (view.stat(path), made)

    def _node(self, path: str, view: FileView) -> _Node:
        """A module as its sketch needs it: what CPython's tree of it imports, and the project
        modules those are (with the names it takes from each). None of either when nothing in it
        can submit or wait, nor call a module that does: then it is not even parsed."""
        source = self.source(path, view)
        module_view = self.module_view(path, view.root)
        if not source.is_text or (not source.may_matter and not self.text_imports(path, view)):
            return _Node(source, module_view, None, None, ())
        text = self._text(path, source)
        if text is None or source.digest is None:
            return _Node(source, module_view, None, None, ())
        listed = self._listed_imports(path, source.digest, text, module_view)
        if listed is None:
            return _Node(source, module_view, text, None, ())
        return _Node(source, module_view, text, listed, tuple(module_view.resolve(listed)))

    def _listed_imports(
        self, path: str, digest: str, text: str, module_view: FileView
    ) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None:
        """What CPython's tree of ``text`` imports (``_imports``, made absolute from the module's
        package), None if it does not parse: from the store when it has it (a function of the
        text and the package alone), else parsed."""
        key = None
        if self.store is not None and self._trees.get(path, ("",))[0] != _text_key(text):
            key = _key("imports", digest, module_view.package_parts)
            kept = _load(self.store, key, _listed_from_json)
            if kept is not None:
                self.counts["stored imports read"] += 1
                return kept[0]
        tree = self._tree(path, text)
        listed = None
        if tree is not None:
            listed = tuple(
                (module, tuple(names))
                for module, names in _imports(tree, module_view.absolute_name)
            )
        if key is not None:
            self._save(
                key,
                None if listed is None else [[m, [list(n) for n in names]] for m, names in listed],
            )
        return listed

    def _walked(self, node: _Node, sketch_of: Callable[[str], ModuleSketch]) -> ModuleSketch:
        """One module's sketch, with what ``sketch_of`` says the modules it imports do: from the
        store when it has it under everything the walk reads (the module's text, its name, what
        its imports are found to do, the project names it takes), else walked."""
        if node.listed is None or node.text is None or node.source.digest is None:
            return _EMPTY_SKETCH
        module_view = node.view
        helpers = _helper_names(node.imports, sketch_of)
        helpers = _with_cookbook(helpers, _cookbook_helpers(node.listed, module_view))
        aliases = module_view.aliases_of(node.listed)
        module = module_view.module_name
        key = None
        if self.store is not None:
            key = _key(
                "sketch",
                node.source.digest,
                module,
                [sorted(names) for names in _helper_sets(helpers)],
                list(aliases.items()),
            )
            kept = _load(self.store, key, lambda data: _sketch_from_json(data, aliases))
            if kept is not None:
                self.counts["stored sketches read"] += 1
                return kept
        tree = self._tree(module_view.file, node.text)
        if tree is None:
            return _EMPTY_SKETCH
        self.counts["sketch walks"] += 1
        found = sketch(tree, helpers=helpers)
        classes: dict[str, tuple[str, ...]] = {}
        for statement in tree.body:
            if isinstance(statement, ast.ClassDef):
                bases = []
                for base in statement.bases:
                    dotted = dotted_name(base)
                    if dotted is None:
                        continue
                    head, _, rest = dotted.partition(".")
                    if head in aliases:
                        bases.append(f"{aliases[head]}.{rest}" if rest else aliases[head])
                    elif not rest and any(
                        isinstance(n, ast.ClassDef) and n.name == head for n in tree.body
                    ):
                        bases.append(f"{module}.{head}" if module else head)
                classes[statement.name] = tuple(bases)
        made_helpers = HelperNames(
            found.step_functions,
            found.submit_functions,
            found.waiting_functions,
            found.blocking_functions,
        )
        callable_classes: set[str] = set()
        if "__call__" in made_helpers.submits | made_helpers.waits:
            for statement in tree.body:
                if isinstance(statement, ast.ClassDef) and any(
                    isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    and item.name == "__call__"
                    for item in statement.body
                ):
                    callable_classes.add(statement.name)
                    callable_classes.update(
                        b.rsplit(".", 1)[-1]
                        for b in classes[statement.name]
                        if b.startswith(module)
                    )
        made = ModuleSketch(made_helpers, classes, aliases, frozenset(callable_classes))
        if key is not None:
            self._save(key, _sketch_to_json(made))
        return made

    def _save(self, key: str, value: Any) -> None:
        assert self.store is not None
        self.store.put(key, value)
        self.counts["stored"] += 1

    def facts(self, path: str, view: FileView) -> ModuleFacts | None:
        """The facts of the module at ``path`` (absolute) with ``view``'s budget (the module's
        docstring); None with no budget left."""
        return _answer(
            self._facts,
            path,
            view,
            lambda budget: self._summarise(path, view.root, budget),
            None,
            _depends,
        )

    def _summarise(
        self, path: str, root: str, budget: int
    ) -> tuple[ModuleFacts | None, FileView | None]:
        try:
            raw = self._read(path)
        except OSError:
            return None, None
        digest = hashlib.sha256(raw).hexdigest()
        helper_view = FileView(self, path, path, root, budget)
        key = None
        if self.store is not None:
            # Everything the facts are made of but the project's answers to the model's
            # questions, which are asked again (``_stored_facts``).
            key = _key(
                "facts",
                digest,
                path,
                root,
                helper_view.module_name,
                helper_view.package_parts,
                budget,
            )
            kept = self._stored_facts(key, path, root, budget, digest)
            if kept is not None:
                return kept
        # Absolute: shown relative to the asking file, it would name the module from the first
        # file that asked (messages place wait sites themselves, ``WaitSite.where``).
        facts = ModuleFacts(path, depends={path: digest})
        made = self._made_facts(path, raw, digest, helper_view, facts)
        if key is not None:
            asked = made.asked if made is not None else None
            self._save(key, _facts_to_json(facts, asked))
        return facts, (helper_view if made is not None else None)

    def _made_facts(
        self, path: str, raw: bytes, digest: str, helper_view: FileView, facts: ModuleFacts
    ) -> RecordingView | None:
        """Fill ``facts`` (a module with no model: left empty); the view its model asked the
        project through, with the questions and answers (None: no model was made)."""
        if len(raw) > _MAX_HELPER_BYTES:
            return None
        try:
            text = decode_source(raw).text
        except DecodeError:
            return None
        if _MAY_MATTER.search(text) is None:
            return None
        tree = self._tree(path, text)
        if tree is None:
            return None
        # CPython's tree says whether anything in it submits or waits, or calls another module
        # of the project: only then is it worth libcst's parse and a model.
        if not self._requests_or_waits(path, digest, tree):
            return None
        from tinker_lint.model.analyses.summaries import located
        from tinker_lint.model.query import SemanticModel
        from tinker_lint.model.reuse import RecordingView
        from tinker_lint.syntax.parse import parse_module
        from tinker_lint.syntax.positions import NodePositions, statement_starts

        kept = self._modules.get(path)
        if kept is not None and kept[0] == digest:
            module = kept[2]
        else:
            try:
                module = parse_module(text)
            except Exception:  # a helper libcst cannot parse offers nothing
                module = None
            self._modules[path] = (digest, _text_key(text), module)
        if module is None:
            return None

        self.counts["models"] += 1
        asking = RecordingView(helper_view)
        model = SemanticModel(module, project=asking, module_name=helper_view.module_name)
        # Its wait sites' lines, found statement by statement from CPython's tree (``located``).
        model.use_positions(NodePositions(module, statement_starts(tree, module), model.parent))
        helpers = model.helpers
        for function in model.functions:
            if function.parent is None and function.class_name is None:
                facts.functions[function.name] = located(model.summary_of(function))
        for name, node in model.index.classes.items():
            facts.classes[name] = self._class(model, helpers, name, node)
        facts.depends.update(helper_view.received)
        facts.depends[path] = digest
        return asking

    def _stored_facts(
        self, key: str, path: str, root: str, budget: int, digest: str
    ) -> tuple[ModuleFacts, FileView | None] | None:
        """The facts the store keeps under ``key``, if the project still answers every question
        their model asked as it did then (each asked again of a new view with the same budget:
        what that view then received, needed and met is what the model's view would have)."""
        assert self.store is not None
        stored = _load(self.store, key, _facts_from_json)
        if stored is None:
            return None
        functions, classes, asked = stored
        view = None
        if asked is not None:
            view = FileView(self, path, path, root, budget)
            from tinker_lint.model.reuse import answers_same

            questions = {
                (question, tuple(arguments)): answer for question, arguments, answer in asked
            }
            if not answers_same(view, questions):
                self.counts["stored facts stale"] += 1
                return None
        self.counts["stored facts read"] += 1
        facts = ModuleFacts(path, functions, classes, depends={path: digest})
        if view is not None:
            facts.depends.update(view.received)
            facts.depends[path] = digest
        return facts, view

    def _requests_or_waits(self, path: str, digest: str, tree: ast.Module) -> bool:
        """Whether anything in the module's tree submits a request or waits (a sketch without
        its helpers), once per bytes: its facts are made again for each budget they are asked
        with."""
        kept = self._requests.get(path)
        if kept is None or kept[0] != digest:
            shape = sketch(tree)
            kept = self._requests[path] = (
                digest,
                bool(shape.called_roles & _REQUESTS or shape.waits),
            )
        return kept[1]

    def _tree(self, path: str, text: str) -> ast.Module | None:
        """CPython's tree of a module's ``text`` (None: it does not parse), parsed once per text:
        its facts are made again for each budget they are asked with (the module's docstring)."""
        key = _text_key(text)
        kept = self._trees.get(path)
        if kept is not None and kept[0] == key:
            return kept[1]
        self.counts["trees"] += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree: ast.Module | None = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        self._trees[path] = (key, tree)
        return tree

    def kept_tree(self, path: str, text: str) -> ast.Module | None:
        """CPython's tree of the module at ``path`` if it was parsed from this very ``text`` (a
        run sketches its helper modules before it lints them: the lint need not parse again)."""
        kept = self._trees.get(os.path.abspath(path))
        return kept[1] if kept is not None and kept[0] == _text_key(text) else None

    def kept_module(self, path: str, text: str) -> Module | None:
        """libcst's tree of the module at ``path`` if its facts were made from this very
        ``text`` (a helper module linted after another file asked for its facts: the lint need
        not parse it again; libcst's trees are immutable, so its model and the lint's can share
        one)."""
        kept = self._modules.get(os.path.abspath(path))
        return kept[2] if kept is not None and kept[1] == _text_key(text) else None

    @staticmethod
    def _class(model: object, helpers: Helpers, name: str, node: object) -> ClassSummary:
        from tinker_lint.model.analyses.summaries import ClassSummary, is_abstract, located
        from tinker_lint.model.query import SemanticModel

        assert isinstance(model, SemanticModel)
        bases: list[str] = []
        for base in getattr(node, "bases", ()):
            value = base.value
            qualified = helpers.is_class(value, model.module_scope)
            if qualified is not None:
                bases.append(qualified)
        methods: dict[str, Summary] = {}
        abstract: set[str] = set()
        for method_name, function in model.index.methods.get(name, {}).items():
            if function.scope.parent is not None and function.scope.parent.kind != "class":
                continue
            methods[method_name] = located(model.summary_of(function))
            if is_abstract(function.node):
                abstract.add(method_name)
        return ClassSummary(name, tuple(bases), methods, frozenset(abstract))


class FileView:
    """One file's view of its project (``model.summaries.ProjectView``)."""

    def __init__(
        self, index: ProjectIndex, path: str, absolute: str, root: str, budget: int = MAX_DEPTH
    ) -> None:
        self.index = index
        self.given = path
        self.file = absolute
        self.root = root
        self.directory = os.path.dirname(absolute)
        self.package_parts = _package_parts(self.directory, root)
        stem = os.path.splitext(os.path.basename(absolute))[0]
        parts = self.package_parts if stem == "__init__" else [*self.package_parts, stem]
        self.module_name = ".".join(parts)
        self.package = ".".join(self.package_parts)
        self.consulted: list[str] = []  # project files asked about, in order (absolute paths)
        # How many modules deep this view's questions may still go (a linted file: MAX_DEPTH; a
        # module summarised for it: one less per module), whether an answer it got met a cut
        # (ran out of budget, here or below), and the deepest chain its answers needed.
        self.budget = budget
        self.met_cut = False
        self.needs = 0
        # The project files the answers it got were made from: path -> SHA-256.
        self.received: dict[str, str] = {}
        # What it was found to reach through the text of its imports (``reaches_tinker``): the
        # files those answers read are among its dependencies.
        self.reached: list[Reach] = []
        # Each project file's stat, read once per view (a lint asks of its helpers' modules
        # hundreds of times: 470 stats per lint of rl/train.py), so one lint sees one state.
        self._stats: dict[str, Stat] = {}

    # --- ProjectView -------------------------------------------------------------------------
    @property
    def path(self) -> str:
        return self.file

    def stat(self, path: str) -> Stat:
        """A project file's (mtime, size), or its buffer's: as this view first read it."""
        found = self._stats.get(path, _UNREAD)
        if found is _UNREAD:
            found = self._stats[path] = self.index._stat(path)
        return found

    def display(self, path: str) -> str:
        """A project file as messages show it: relative to this file's directory."""
        try:
            return os.path.relpath(path, self.directory)
        except ValueError:
            return path

    def absolute_name(self, name: str) -> str:
        dots = len(name) - len(name.lstrip("."))
        if not dots:
            return name
        parts = (
            self.package_parts[: len(self.package_parts) - (dots - 1)]
            if dots > 1
            else list(self.package_parts)
        )
        rest = name[dots:]
        return ".".join([*parts, rest] if rest else parts)

    def function(self, qualified: str, seen: frozenset[str] = frozenset()) -> Summary | None:
        found = self._lookup(qualified)
        if found is None or qualified in seen:
            return None
        path, shape, attribute = found
        seen = seen | {qualified}
        head, _, rest = attribute.partition(".")
        alias = shape.aliases.get(head)
        if alias is not None:
            return self.function(f"{alias}.{rest}" if rest else alias, seen)
        if head in shape.classes:
            if not rest:
                return None  # a constructor: its ``__init__`` is setup, not a step
            return self.method(f"{_module_name(path, self.root)}.{head}", rest, seen)
        if rest or not shape.may_matter(head):
            return None  # by its module's sketch, it neither submits nor waits: no libcst needed
        facts = self.index.facts(path, self)
        return facts.functions.get(head) if facts is not None else None

    def method(
        self, qualified_class: str, name: str, seen: frozenset[str] = frozenset()
    ) -> Summary | None:
        found = self._lookup(qualified_class)
        if found is None or qualified_class in seen:
            return None
        seen = seen | {qualified_class}
        path, shape, class_name = found
        alias = shape.aliases.get(class_name)
        if alias is not None:
            return self.method(alias, name, seen)
        bases = shape.classes.get(class_name)
        if bases is None:
            return None
        if shape.may_matter(name):
            facts = self.index.facts(path, self)
            record = facts.classes.get(class_name) if facts is not None else None
            if facts is not None and record is not None and name in record.methods:
                return _own_or_overrides(facts, record, qualified_class, name)
        for base in bases:
            inherited = self.method(base, name, seen)
            if inherited is not None:
                return inherited
        return None

    def holds(self, qualified: str) -> bool:
        return self._lookup(qualified) is not None

    def is_class(self, qualified: str) -> bool:
        found = self._lookup(qualified)
        if found is None:
            return False
        _, shape, name = found
        if name in shape.classes:
            return True
        alias = shape.aliases.get(name)
        return alias is not None and alias != qualified and self.is_class(alias)

    # --- imports -----------------------------------------------------------------------------
    def project_aliases(self, tree: ast.Module) -> dict[str, str]:
        """Names this module imports from the project's other modules, qualified: what a
        re-export (``from .steps import f`` in ``__init__.py``) offers, and what its bases name."""
        return self.aliases_of(_imports(tree, self.absolute_name))

    def aliases_of(self, listed: Iterable[tuple[str, Iterable[tuple[str, str]]]]) -> dict[str, str]:
        """``project_aliases`` of a tree that imports ``listed`` (``_imports``)."""
        names: dict[str, str] = {}
        for module, taken in listed:
            if taken and self._module_file(module) is not None:
                for name, local in taken:
                    names[local] = f"{module}.{name}".lstrip(".")
        return names

    def imports_helpers(self, text: str, identifiers: frozenset[str]) -> bool:
        """Whether the file imports a module of the project with a function that submits or
        waits (by that module's CPython sketch) and names it (``identifiers``: the file's words):
        its own text then tells nothing of what it may find, and the text pre-filter lets the
        rules that see helpers through."""
        for path in self.index.text_imports(self.file, self, text):
            self._consult(path)
            shape = self.index.module_sketch(path, self)
            helpers = shape.helpers
            if identifiers & (helpers.submits | helpers.waits) or (
                identifiers & shape.callable_classes
            ):
                return True
        # tinker-cookbook's API, where the project does not hold it (``_cookbook_helpers``).
        return bool(identifiers & cookbook_api.NAMES) and cookbook_api.imports_any(
            imported_modules(text)
        )

    def may_see_helpers(self, facts: TextFacts, hot_loop_calls: bool) -> bool:
        """Whether a helper of the project may give the rules anything to find in this file
        that its own text does not show: it names Tinker itself, the project makes loops hot by
        name (``hot-loop-calls``), or a module it imports, however deep, names Tinker
        (``reaches_tinker``). The engine and ``run.gate`` ask this, and only then for helpers."""
        return hot_loop_calls or may_concern_tinker(facts) or self.reaches_tinker(facts.text)

    def reaches_tinker(self, text: str) -> bool:
        """Whether a module the file imports, or one those import in turn however deep, may
        call Tinker by its text (``Source.names_tinker``). If none does, no function of the
        project the file can call submits a request, so a file that names no Tinker itself can
        hold no Tinker future: no rule on Tinker can find anything in it, and its imports need no
        sketch. What it read counts among the file's dependencies (a module may come to name
        Tinker)."""
        parts = [
            self.index.reach(path, self) for path in self.index.text_imports(self.file, self, text)
        ]
        if any(part.tinker for part in parts):
            return True
        if cookbook_api.imports_any(imported_modules(text)):
            return True  # tinker-cookbook's API, which submits (``facts/cookbook_api.py``)
        self.reached.extend(parts)  # read when the dependencies are asked for (a cache's key)
        return False

    def helper_names(self, tree: ast.Module) -> HelperNames:
        """What the file may call of its project's modules that submits or waits: every name
        their sketches say does (so ``obj.method()`` on an instance of their class counts), and
        each name imported under another (``from .steps import fwd as step``)."""
        listed = list(_imports(tree, self.absolute_name))
        imports = self.resolve(listed)
        for path, _ in imports:
            self._consult(path)
        found = _helper_names(imports, lambda path: self.index.module_sketch(path, self))
        return _with_cookbook(found, _cookbook_helpers(listed, self))

    def resolved_imports(self, tree: ast.Module) -> list[tuple[str, list[tuple[str, str]]]]:
        """The project files the tree imports, each with the names taken from it (name, local)."""
        return self.resolve(_imports(tree, self.absolute_name))

    def resolve(
        self, listed: Iterable[tuple[str, Iterable[tuple[str, str]]]]
    ) -> list[tuple[str, list[tuple[str, str]]]]:
        """The project files of the modules ``listed`` (``_imports``), with the names taken."""
        found = []
        for module, names in listed:
            path = self._module_file(module)
            if path is not None:
                found.append((path, list(names)))
        return found

    def dependencies(self) -> dict[str, str]:
        """Every project file the findings of this file depend on: path -> SHA-256."""
        # What its pre-filters read (the sketches), and what its model read (the facts): the
        # answers it got, not whatever else the index holds of the modules it asked about.
        found = dict(self.received)
        Reach.read(self.reached, found)
        # Where its own text's imports were looked for (``reaches_tinker``, through its module view).
        found.update(_listings(self.index.module_view(self.file, self.root).received))
        found.pop(self.file, None)
        return dict(sorted(merged_listings(found).items()))

    def _lookup(self, qualified: str) -> tuple[str, ModuleSketch, str] | None:
        """The module a qualified name's longest prefix names (its path and sketch), and the
        rest of the name."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self._module_file(".".join(parts[:cut]))
            if path is None:
                continue
            self._consult(path)
            return path, self.index.module_sketch(path, self), ".".join(parts[cut:])
        return None

    def _consult(self, path: str) -> None:
        if path not in self.consulted:
            self.consulted.append(path)

    def _module_file(self, module: str) -> str | None:
        """The project file ``module`` names, looked for from this view's directory. Where it
        was looked for counts among what this view's answers were made from (each directory
        whose listing was read, with which of the names looked for it held: ``listing_key``):
        a module appearing there, or going, may change them."""
        key = (self.directory, module)
        files = self.index._files
        found = files.get(key)
        if found is None:
            found = files[key] = self._find_module_file(module)
        self.received.update(found[1])
        return found[0]

    def _find_module_file(self, module: str) -> tuple[str | None, tuple[tuple[str, str], ...]]:
        """The file, and what the listings read to find it said (``listing_key`` ->
        ``listing_answer``): which of the names looked for each directory holds."""
        # ``tinker`` is the SDK, never the project's (a checkout of the SDK is not linted for this).
        if not module or module.split(".")[0] == "tinker":
            return None, ()
        relative = module.replace(".", os.sep)
        index = self.index
        head = module.partition(".")[0]
        asked: dict[str, str] = {}

        def holds(directory: str, *names: str) -> frozenset[str]:
            listing = index.listing(directory or os.sep)
            key = listing_key(directory or os.sep, names)
            asked[key] = listing_answer(listing, key)
            return listing

        *packages, last = module.split(".")
        for prefix in self.search_prefixes:
            # Most names are of no module of the project: their first part says so at once.
            names = holds(prefix[:-1], head + ".py", head + os.sep)
            if head + ".py" not in names and head + os.sep not in names:
                continue
            # Down its packages, each a directory its parent's listing shows (a directory that is
            # not there is not listed: the parent's answer says so).
            directory = prefix[:-1]
            for package in packages:
                if package + os.sep not in holds(directory, package + os.sep):
                    break
                directory += os.sep + package
            else:
                names = holds(directory, last + ".py", last + os.sep)
                if last + ".py" in names:
                    return prefix + relative + ".py", tuple(asked.items())
                package = directory + os.sep + last
                if last + os.sep in names and "__init__.py" in holds(package, "__init__.py"):
                    return prefix + relative + os.sep + "__init__.py", tuple(asked.items())
        return None, tuple(asked.items())

    @cached_property
    def search_prefixes(self) -> list[str]:
        """Where an absolute import is looked for (``_search_dirs``), each ending in a separator."""
        return [d.rstrip(os.sep) + os.sep for d in _search_dirs(self.directory, self.root)]


def _imports(
    tree: ast.Module, absolute: Callable[[str], str]
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Each module a tree imports (made absolute), with the names taken from it (name, local);
    ``from pkg import steps`` also yields ``pkg.steps``, which may be the module meant."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        # Imports are statements: only blocks of statements are walked.
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field_name, None)
            if isinstance(block, list):
                stack.extend(block)
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = absolute("." * node.level + (node.module or ""))
            names = [(a.name, a.asname or a.name) for a in node.names if a.name != "*"]
            yield module, names
            for name, _ in names:
                yield f"{module}.{name}".lstrip("."), []


def strongly_connected(
    start: str, successors: Callable[[str], Iterable[str]], done: Callable[[str], bool]
) -> Iterator[list[str]]:
    """The strongly connected parts of the graph ``successors`` draws from ``start`` (Tarjan's
    algorithm, without recursion), each sorted, each after every part it reaches; nodes that are
    ``done`` are neither entered nor followed. Each part is used before the next is looked for."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def enter(node: str) -> tuple[str, Iterator[str]]:
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        return node, iter(successors(node))

    work = [enter(start)]
    while work:
        node, following = work[-1]
        for successor in following:
            if successor in order:
                if successor in on_stack:
                    low[node] = min(low[node], order[successor])
            elif not done(successor):
                work.append(enter(successor))
                break
        else:
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == order[node]:
                at = stack.index(node)
                part, stack[at:] = stack[at:], []
                on_stack.difference_update(part)
                yield sorted(part)


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _files_named(view: FileView, names: Iterable[str]) -> tuple[str, ...]:
    """The project files module ``names`` (as written: ``.steps``) name, found from ``view``."""
    found = {view._module_file(view.absolute_name(name)) for name in names}
    found.discard(None)
    return tuple(sorted(found))  # type: ignore[arg-type]


def _helper_names(
    imports: Iterable[tuple[str, list[tuple[str, str]]]],
    sketch_of: Callable[[str], ModuleSketch],
) -> HelperNames:
    """What a module may call that submits or waits, from the sketches of the project files it
    imports (each with the names it takes from it: name, local)."""
    steps: set[str] = set()
    submits: set[str] = set()
    waits: set[str] = set()
    blocks: set[str] = set()
    for path, names in imports:
        found = sketch_of(path).helpers
        steps |= found.steps
        submits |= found.submits
        waits |= found.waits
        blocks |= found.blocks
        for name, local in names:
            if name in found.steps:
                steps.add(local)
            if name in found.submits:
                submits.add(local)
            if name in found.waits:
                waits.add(local)
            if name in found.blocks:
                blocks.add(local)
    return HelperNames(frozenset(steps), frozenset(submits), frozenset(waits), frozenset(blocks))


def _cookbook_helpers(
    listed: Iterable[tuple[str, Iterable[tuple[str, str]]]], view: FileView
) -> HelperNames:
    """What a module may call of tinker-cookbook's API that submits or waits, by name, from the
    table (``facts/cookbook_api.py``): the entries of each cookbook module it imports that the
    project does not hold, and each under the local name it is imported as."""
    steps: set[str] = set()
    submits: set[str] = set()
    waits: set[str] = set()
    blocks: set[str] = set()
    for module, names in listed:
        if not cookbook_api.in_cookbook(module) or module not in cookbook_api.MODULES:
            continue
        if view._module_file(module) is not None:
            continue  # the project's own: its sketch says what it does
        found = cookbook_api.callables_in(module)
        taken = [(name, name) for name in found]
        taken += [(name, local) for name, local in names if name in found]
        for name, local in taken:
            entry = found[name]
            if entry.submits:
                submits.add(local)
            if entry.submits & {Role.TRAIN, Role.SAMPLE}:
                steps.add(local)
            if entry.waits:
                waits.add(local)
                if entry.blocks:
                    blocks.add(local)
    return HelperNames(frozenset(steps), frozenset(submits), frozenset(waits), frozenset(blocks))


def _with_cookbook(helpers: HelperNames, more: HelperNames) -> HelperNames:
    if not more:
        return helpers
    return HelperNames(
        helpers.steps | more.steps,
        helpers.submits | more.submits,
        helpers.waits | more.waits,
        helpers.blocks | more.blocks,
    )


def _own_or_overrides(
    facts: ModuleFacts, record: ClassSummary, qualified_class: str, name: str
) -> Summary | None:
    """A method's summary; for one without a body (an interface), what its overrides in the
    class's module do, when they all wait."""
    own = record.methods[name]
    if name not in record.abstract:
        return own
    overrides = [
        c.methods[name]
        for c in facts.classes.values()
        if qualified_class in c.bases and name in c.methods and name not in c.abstract
    ]
    if overrides and all(s.waits for s in overrides):
        return sorted(overrides, key=lambda s: s.name)[0]
    return None


def _listings(received: dict[str, str]) -> dict[str, str]:
    """What the directory listings read for a view said (``listing_key`` -> ``listing_answer``):
    where the modules it asked for were looked for."""
    return {key: value for key, value in received.items() if is_listing_key(key)}


def _depends(made: object) -> dict[str, str]:
    """The files an answer (a sketch, facts, or None) was made from: path -> SHA-256."""
    found: dict[str, str] = getattr(made, "depends", {})
    return found


def _answer(
    table: dict[str, _Answers[Made]],
    path: str,
    view: FileView,
    make: Callable[[int], tuple[Made, FileView | None]],
    cut: Made,
    depends: Callable[[Made], dict[str, str]],
) -> Made:
    """What the module at ``path`` answers ``view`` with ``view.budget`` modules left: ``cut``
    with none; else ``make(budget - 1)`` (the answer, and the view its questions went through),
    kept as the module's complete answer when nothing below met a cut (then given for every budget
    at least the chain it needed), else kept for that budget. Either way a function of the module,
    the budget and the files below, never of the order the questions came in (issue 29)."""
    stat = view.stat(path)
    answers = table.get(path)
    if answers is None or answers.stat != stat:
        answers = table[path] = _Answers(stat)
    budget = view.budget
    if answers.needs and budget >= answers.needs:
        made: Made = answers.complete  # type: ignore[assignment]
        view.needs = max(view.needs, answers.needs)
    elif budget <= 0:
        view.met_cut = True
        return cut
    elif budget in answers.partial:
        made = answers.partial[budget]
        view.met_cut = True
    else:
        made, asked = make(budget - 1)
        needs = 1 + (asked.needs if asked is not None else 0)
        if asked is not None and asked.met_cut:
            answers.partial[budget] = made
            view.met_cut = True
        else:
            answers.complete, answers.needs = made, needs
            # Kept answers made with a smaller budget than it needs all met a cut; none is kept
            # with a bigger one (they were complete): nothing to drop.
        view.needs = max(view.needs, needs)
    view.received.update(depends(made))
    return made


# ==========================================================================================
# What the store keeps (``ModuleStore``): plain JSON, read back only if it has the shape written
# ==========================================================================================
_STORE_FORMAT = 1  # bumped when what a key covers, or a value's shape, changes
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _key(kind: str, *parts: object) -> str:
    """The store's key of a value made from ``parts`` (plain data, in order)."""
    text = json.dumps([_STORE_FORMAT, kind, *parts], ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


Loaded = TypeVar("Loaded")


def _load(store: ModuleStore, key: str, decode: Callable[[Any], Loaded]) -> Loaded | None:
    """The value kept under ``key``, decoded; None if there is none, or it is not one the index
    wrote (a damaged or foreign entry is a miss, never an error)."""
    try:
        data = store.get(key)
        if data is None or not _plain_text(data):
            return None
        return decode(data)
    except Exception:  # anything read from a file is untrusted: its shape is checked by use
        return None


def _plain_text(data: Any) -> bool:
    """Whether every string in ``data`` is free of control characters (names and paths are)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _CONTROL.search(item):
                return False
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
    return True


def _strings(data: Any) -> list[str]:
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ValueError("not a list of strings")
    return data


def _pairs(data: Any) -> list[tuple[str, str]]:
    if not isinstance(data, list):
        raise ValueError("not a list")
    found = []
    for item in data:
        first, second = _strings(item)
        found.append((first, second))
    return found


def _listed_from_json(
    data: Any,
) -> tuple[tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None]:
    """``_Node.listed`` as stored, in a 1-tuple (its None, "does not parse", is a value)."""
    if data is None:
        return (None,)
    if not isinstance(data, list):
        raise ValueError("not a list")
    found = []
    for item in data:
        module, names = item
        if not isinstance(module, str):
            raise ValueError("not a module name")
        found.append((module, tuple(_pairs(names))))
    return (tuple(found),)


def _helper_sets(helpers: HelperNames) -> tuple[frozenset[str], ...]:
    return helpers.steps, helpers.submits, helpers.waits, helpers.blocks


def _sketch_to_json(made: ModuleSketch) -> dict[str, Any]:
    return {
        "helpers": [sorted(names) for names in _helper_sets(made.helpers)],
        "classes": [[name, list(bases)] for name, bases in made.classes.items()],
        "callable": sorted(made.callable_classes),
    }


def _sketch_from_json(data: Any, aliases: dict[str, str]) -> ModuleSketch:
    """A sketch as stored (its aliases are what the key was made with)."""
    if not isinstance(data, dict) or set(data) != {"helpers", "classes", "callable"}:
        raise ValueError("not a sketch")
    steps, submits, waits, blocks = (frozenset(_strings(names)) for names in data["helpers"])
    classes: dict[str, tuple[str, ...]] = {}
    if not isinstance(data["classes"], list):
        raise ValueError("not a list")
    for name, bases in data["classes"]:
        if not isinstance(name, str):
            raise ValueError("not a class name")
        classes[name] = tuple(_strings(bases))
    return ModuleSketch(
        HelperNames(steps, submits, waits, blocks),
        classes,
        dict(aliases),
        frozenset(_strings(data["callable"])),
    )


_QUESTIONS = {"function": 1, "method": 2, "is_class": 1}  # what may be asked again, and its arity


def _facts_to_json(
    facts: ModuleFacts, asked: dict[tuple[str, tuple[str, ...]], Any] | None
) -> dict[str, Any]:
    """A module's facts with the questions its model asked (None: no model was made)."""
    return {
        "functions": [[name, summary.to_json()] for name, summary in facts.functions.items()],
        "classes": [
            [
                name,
                list(record.bases),
                [[method, summary.to_json()] for method, summary in record.methods.items()],
                sorted(record.abstract),
            ]
            for name, record in facts.classes.items()
        ],
        "asked": None
        if asked is None
        else [
            [question, list(arguments), answer] for (question, arguments), answer in asked.items()
        ],
    }


def _facts_from_json(
    data: Any,
) -> tuple[
    dict[str, Summary], dict[str, ClassSummary], list[tuple[str, tuple[str, ...], Any]] | None
]:
    from tinker_lint.model.analyses.summaries import ClassSummary, Summary

    if not isinstance(data, dict) or set(data) != {"functions", "classes", "asked"}:
        raise ValueError("not facts")

    def summary(item: Any) -> Summary:
        made = Summary.from_json(item)
        if made.to_json() != item:  # every field as written, nothing else
            raise ValueError("not a summary")
        return made

    functions = {}
    for name, item in data["functions"]:
        if not isinstance(name, str):
            raise ValueError("not a name")
        functions[name] = summary(item)
    classes = {}
    for name, bases, methods, abstract in data["classes"]:
        if not isinstance(name, str):
            raise ValueError("not a name")
        summaries = {}
        for method, item in methods:
            if not isinstance(method, str):
                raise ValueError("not a name")
            summaries[method] = summary(item)
        classes[name] = ClassSummary(
            name, tuple(_strings(bases)), summaries, frozenset(_strings(abstract))
        )
    asked = None
    if data["asked"] is not None:
        asked = []
        for question, arguments, answer in data["asked"]:
            if _QUESTIONS.get(question) != len(_strings(arguments)):
                raise ValueError("not a question")
            asked.append((question, tuple(arguments), answer))
    return functions, classes, asked


def _stat(path: str) -> Stat:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


_SHARED: ProjectIndex | None = None


def project_index() -> ProjectIndex:
    """The index of this process: every file linted in it shares what its helpers do."""
    global _SHARED
    if _SHARED is None:
        _SHARED = ProjectIndex()
    return _SHARED


def _project_root(path: str) -> str:
    """The nearest directory above ``path`` that marks a project (``pyproject.toml``,
    ``setup.cfg``, ``setup.py``, requirements, ``.git``) or holds an installed or unpacked
    distribution (a ``*.dist-info`` folder beside its packages: a wheel unpacked inside another
    project is its own); without one, the directory holding the top package ``path`` is in (a bare
    checkout), or the file's own."""
    start = os.path.dirname(path)
    directory = start
    while True:
        if (
            marks_a_project(directory)
            or os.path.isdir(os.path.join(directory, ".git"))
            or _holds_distribution(directory)
        ):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    top = start
    while os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    return top


def _holds_distribution(directory: str) -> bool:
    try:
        with os.scandir(directory) as entries:
            return any(e.name.endswith(".dist-info") and e.is_dir() for e in entries)
    except OSError:
        return False


def _package_parts(directory: str, root: str) -> list[str]:
    """The package ``directory`` is, by its ``__init__.py`` files up to the root."""
    parts: list[str] = []
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parts.append(os.path.basename(directory))
        if directory == root:
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return list(reversed(parts))


def _search_dirs(directory: str, root: str) -> list[str]:
    """Where an absolute import is looked for: the file's directory, those above it up to the
    root, and the root's ``src``."""
    found = [directory]
    while directory != root and directory.startswith(root):
        directory = os.path.dirname(directory)
        found.append(directory)
    found.append(os.path.join(root, "src"))
    return found


def _module_name(path: str, root: str) -> str:
    directory = os.path.dirname(path)
    parts = _package_parts(directory, root)
    stem = os.path.splitext(os.path.basename(path))[0]
    return ".".join(parts if stem == "__init__" else [*parts, stem])
