"""The Language Server Protocol side of ``tinker-lint server`` (pygls), over stdio.

Diagnostics are pushed (``textDocument/publishDiagnostics``) after ``didOpen``, ``didChange`` and
``didSave``; a client that declares pull diagnostics (``textDocument/diagnostic``) pulls them
instead, and is told to pull again (``workspace/diagnostic/refresh``) when a helper changed under
its files: never both, or it would show each finding twice.

Every lint runs on one worker thread, one at a time (the engine, the project index and the
fixer are not thread-safe), so the event loop keeps reading the client. Edits that arrive while a
file is being linted are coalesced: only the newest text is linted and published.

The client sends each change as the whole text (``TextDocumentSyncKind.Full``): pygls applies
incremental changes by ``str.splitlines``, which also splits at form feeds and the other
separators LSP does not count as line ends, and would corrupt such a buffer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.uris import to_fs_path

from tinker_lint import __version__
from tinker_lint.diagnostics import SAFE, Diagnostic
from tinker_lint.io.settings import char_count
from tinker_lint.server import convert
from tinker_lint.server.lint import (
    CONFIG_NAMES,
    SERVER_MAX_FILE_CHARS,
    Linted,
    Linter,
    has_safe_fix,
    noqa_edit,
)
from tinker_lint.server.memory import QUIET_SECONDS, Collector

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.tinker-lint"
FIX_ALL_COMMAND = "tinker-lint.fixAll"
FIX_ALL_TITLE = "Fix all safe tinker-lint problems"
# What the client is asked to watch (when it can be asked): helpers, configurations and pins.
WATCHED = (
    "**/*.py",
    "**/pyproject.toml",
    "**/setup.cfg",
    "**/requirements*.txt",
    "**/uv.lock",
    "**/poetry.lock",
)


class _Unreadable:
    """A message whose params do not fit its method (a position at line -1, ``textDocument: 5``):
    a request gets -32602 (InvalidParams), a notification is dropped."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.id: Any = data.get("id")
        self.method = str(data.get("method"))
        self.jsonrpc = data.get("jsonrpc")


class Protocol(LanguageServerProtocol):
    """pygls's protocol, with every request answered as LSP says: pygls leaves unanswered a
    request whose params it cannot read (logging it only) and any request after ``shutdown``,
    and answers one before ``initialize`` with -32603 and a traceback (its handler finds no
    workspace), so the client waits forever or shows the traceback."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_received = False

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if "method" in data:  # a request or a notification (not a response of the client's)
                return _Unreadable(data)
            raise

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        request = method is not None and getattr(message, "id", None) is not None
        if request and self._shutdown and method != types.EXIT:
            error: JsonRpcException = JsonRpcInvalidRequest(
                f"{method}: the server was shut down (only `exit` is expected now)"
            )
            self._send_response(message.id, error=error.to_response_error())
            return
        if not self.initialize_received and method not in (types.INITIALIZE, types.EXIT):
            if request:
                error = JsonRpcServerNotInitialized(
                    f"{method}: the server is not initialized (send `initialize` first)"
                )
                self._send_response(message.id, error=error.to_response_error())
            return  # a notification before ``initialize`` is dropped (LSP)
        if isinstance(message, _Unreadable):
            if request:
                error = JsonRpcInvalidParams(f"{method}: the params do not fit the method")
                self._send_response(message.id, error=error.to_response_error())
            return
        if method == types.INITIALIZE and isinstance(message, RPCRequest):
            self.initialize_received = True
        super().handle_message(message)


class TinkerLintServer(LanguageServer):
    def __init__(self, max_file_chars: int = SERVER_MAX_FILE_CHARS) -> None:
        super().__init__(
            "tinker-lint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=Protocol,
        )
        self.linter = Linter(max_file_chars)
        self.collector = Collector()  # the garbage collector runs between lints, not in one
        self._collection: asyncio.TimerHandle | None = None  # the one due at the next pause
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tinker-lint")
        self.linted: dict[str, tuple[int | None, Linted]] = {}  # uri -> (version, its lint)
        self.stale: set[str] = set()  # linted before a helper of theirs changed
        self.pending: dict[str, None] = {}  # to lint and publish, in order
        self.drainer: asyncio.Future[None] | None = None
        self.told: set[str] = set()  # messages shown or logged (once each, until a reload)
        self.reloads_told = 0

    # --- what the client can do --------------------------------------------------------------
    @property
    def pulls(self) -> bool:
        document = self.client_capabilities.text_document
        return document is not None and document.diagnostic is not None

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding or convert.UTF16
        return str(getattr(encoding, "value", encoding))

    def _can_refresh(self) -> bool:
        workspace = self.client_capabilities.workspace
        diagnostics = workspace.diagnostics if workspace is not None else None
        return bool(diagnostics is not None and diagnostics.refresh_support)

    def open_document(self, uri: str) -> Any:
        """The open document of ``uri``, or None. pygls keys its documents by the unquoted URI,
        and clients quote what a path holds (``%20`` for a space, ``%2B`` for ``+``): looked up
        by the client's own URI, a project under such a path was never linted. Everything sent
        back keeps the client's URI."""
        return self.workspace.text_documents.get(unquote(uri))

    # --- linting -----------------------------------------------------------------------------
    async def in_worker(self, function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.worker, function, *args)

    async def lint(self, uri: str) -> Linted | None:
        """The lint of the open document's current text (linted now unless it is already)."""
        document = self.open_document(uri)
        if document is None:
            return None
        version, text = document.version, document.source
        known = self.linted.get(uri)
        # Its text was linted, and none of its helpers changed since.
        current = known is not None and known[0] == version and known[1].text == text
        if known is not None and current and uri not in self.stale:
            return known[1]
        self.stale.discard(uri)
        self._postpone_collection()
        path = path_of(uri, self.workspace.root_path)
        linted, changed = await self.in_worker(self._lint_now, path, text)
        self.linted[uri] = (version, linted)
        self._tell(linted)
        if changed:
            self._changed([os.path.abspath(path)], but=uri)
        return linted

    def _lint_now(self, path: str, text: str) -> tuple[Linted, bool]:
        """In the worker: feed the index the buffer, lint it. Never raises: an error that escaped
        the engine's own guards is shown once, and the file gets no findings."""
        try:
            changed = False
            with self.collector.paused():
                if path.endswith(".py") and os.path.isabs(path):
                    changed = self.linter.set_buffer(path, text)
                return self.linter.lint(path, text), changed
        except Exception as error:  # the editor must keep its server
            message = f"internal error ({type(error).__name__}: {error}); please report it"
            return Linted(path, text, error=f"{path}: {message}"), False

    def _changed(self, paths: Sequence[str], *, but: str | None = None) -> None:
        """Files changed (a buffer, or on disk): lint again the open files that depend on them."""
        changed = set(paths)
        dependents = [
            uri
            for uri, (_, linted) in self.linted.items()
            if uri != but and not changed.isdisjoint(linted.depends)
        ]
        self._outdated(dependents)

    def _outdated(self, uris: Sequence[str]) -> None:
        if not uris:
            return
        self.stale.update(uris)
        if not self.pulls:
            self.schedule(uris)
        elif self._can_refresh():
            self.workspace_diagnostic_refresh(None)

    def schedule(self, uris: Sequence[str]) -> None:
        self._postpone_collection()
        for uri in uris:
            self.pending[uri] = None
        if self.drainer is None or self.drainer.done():
            self.drainer = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while self.pending:
            uri = next(iter(self.pending))
            del self.pending[uri]
            linted = await self.lint(uri)
            if linted is None or uri in self.pending:
                continue  # closed, or changed again while it was linted: the newer text wins
            version = self.linted.get(uri, (None, linted))[0]
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri, self.diagnostics(linted), version)
            )
            # Its findings sent: the collector may run again before the next lint (a drain of a
            # whole project left it off would keep every lint's garbage to its end: 336 MB).
            self.collector.resume()
        self.collect_if_owed()  # nothing left to lint (and the last findings sent)

    def collect_when_quiet(self) -> None:
        """The between-lints collection (``memory.py``): after ``QUIET_SECONDS`` with no new
        lint (one that comes first postpones it), or at once when too many lints went by without
        one. Never before the reply being made is sent: the collection holds the GIL. The
        collector, off since the lint began, is turned back on."""
        self.collector.resume()
        self._postpone_collection()
        if self.collector.overdue():
            self.worker.submit(self.collector.idle)
            return
        loop = asyncio.get_running_loop()
        self._collection = loop.call_later(QUIET_SECONDS, self.worker.submit, self.collector.idle)

    def collect_if_owed(self) -> None:
        """After a request that may have linted (a code action, a hover, a fix): the collection
        that lint is owed, which turns the collector back on."""
        if self.collector.owed():
            self.collect_when_quiet()

    def _postpone_collection(self) -> None:
        if self._collection is not None:
            self._collection.cancel()
            self._collection = None

    def diagnostics(self, linted: Linted) -> list[types.Diagnostic]:
        lines = convert.split_lines(linted.text)
        return [convert.diagnostic(d, lines, self.encoding) for d in linted.diagnostics]

    def _tell(self, linted: Linted) -> None:
        """Show a configuration (or internal) error once; log the lint's warnings once each."""
        if self.linter.reloads != self.reloads_told:
            self.reloads_told = self.linter.reloads
            self.told.clear()  # the configuration was read again: say again what is still wrong
        if linted.error is not None and linted.error not in self.told:
            self.told.add(linted.error)
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Error, f"tinker-lint: {linted.error}")
            )
        for warning in linted.warnings:
            if warning not in self.told:
                self.told.add(warning)
                self.window_log_message(
                    types.LogMessageParams(types.MessageType.Warning, f"tinker-lint: {warning}")
                )

    # --- code actions ------------------------------------------------------------------------
    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        linted = await self.lint(uri)
        if linted is None or not linted.python:
            return None
        only = params.context.only
        version = self.linted.get(uri, (None, linted))[0]
        lines = convert.split_lines(linted.text)
        first, last = params.range.start.line + 1, params.range.end.line + 1
        here = [d for d in linted.diagnostics if d.line <= last and (d.end_line or d.line) >= first]
        actions: list[types.CodeAction] = []
        if _wanted(only, types.CodeActionKind.QuickFix.value):
            for found in here:
                edits = await self.in_worker(self.linter.fix_alone, linted, found)
                if edits is not None:
                    safe = found.fix is not None and found.fix.applicability == SAFE
                    actions.append(
                        types.CodeAction(
                            title=convert.fix_title(found),
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[convert.diagnostic(found, lines, self.encoding)],
                            is_preferred=safe,
                            edit=self._edit(uri, version, lines, edits),
                        )
                    )
            for found in _one_per_line_and_code(here):
                edit = noqa_edit(linted.text, found.line, found.code)
                if edit is not None:
                    actions.append(
                        types.CodeAction(
                            title=f"Disable {found.code} for this line",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[convert.diagnostic(found, lines, self.encoding)],
                            edit=self._edit(uri, version, lines, (edit,)),
                        )
                    )
        if _wanted(only, FIX_ALL_KIND) and has_safe_fix(linted.diagnostics):
            action = types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND)
            if only:
                # Asked for by kind (on save): the edit itself, worked out now.
                fixed = await self.in_worker(self.linter.fix_all, linted)
                if fixed is None:
                    return actions
                action.edit = self._edit(uri, version, lines, (fixed,))
            else:
                # The light bulb, on every cursor move: the fixer runs only if it is chosen.
                action.command = types.Command(
                    title=FIX_ALL_TITLE, command=FIX_ALL_COMMAND, arguments=[uri]
                )
            actions.append(action)
        return actions

    async def fix_all(self, uri: str) -> None:
        """``tinker-lint.fixAll``: the file's safe fixes, sent as ``workspace/applyEdit``."""
        linted = await self.lint(uri)
        if linted is None:
            return
        fixed = await self.in_worker(self.linter.fix_all, linted)
        if fixed is None:
            return
        version = self.linted.get(uri, (None, linted))[0]
        lines = convert.split_lines(linted.text)
        edit = self._edit(uri, version, lines, (fixed,))
        await self.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=FIX_ALL_TITLE)
        )

    def _edit(
        self, uri: str, version: int | None, lines: list[str], edits: Sequence[Any]
    ) -> types.WorkspaceEdit:
        """A WorkspaceEdit of tinker-lint ``Edit``s, for the document's version when the client
        takes versioned edits (it then refuses one made for a text it no longer has)."""
        text_edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            convert.text_edit(edit, lines, self.encoding) for edit in edits
        ]
        workspace = self.client_capabilities.workspace
        changes = workspace.workspace_edit if workspace is not None else None
        if changes is not None and changes.document_changes:
            document = types.OptionalVersionedTextDocumentIdentifier(uri, version)
            return types.WorkspaceEdit(
                document_changes=[types.TextDocumentEdit(document, text_edits)]
            )
        return types.WorkspaceEdit(
            changes={uri: [e for e in text_edits if isinstance(e, types.TextEdit)]}
        )

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        """A rule's name, level, advice and page: over its code where it is written (``# noqa:
        TNK101``), else over a finding (with the finding's help as the advice)."""
        from tinker_lint.codes import REGISTRY

        uri = params.text_document.uri
        document = self.open_document(uri)
        if document is None:
            return None
        lines = convert.split_lines(document.source)
        row = params.position.line
        if row >= len(lines):
            return None
        column = convert.code_point_column(lines[row], params.position.character, self.encoding)
        code = convert.code_at(lines[row], column)
        help = ""
        if code is None:
            linted = await self.lint(uri)
            here = [
                d
                for d in (linted.diagnostics if linted is not None else [])
                if (d.line - 1, d.col - 1)
                <= (row, column)
                <= ((d.end_line or d.line) - 1, d.end_col - 1)
            ]
            code = here[0].code if here else None
            help = here[0].help if here else ""
        if code is None or code not in REGISTRY:
            return None
        content = types.MarkupContent(types.MarkupKind.Markdown, convert.rule_hover(code, help))
        return types.Hover(contents=content)

    # --- files -------------------------------------------------------------------------------
    async def closed(self, uri: str) -> None:
        """Nothing of a closed document stays: its lint (and findings), its buffer in the project
        index, what each stage kept for its next lint; the next collection, a full one, frees
        their cycles (``Collector.release``)."""
        self.linted.pop(uri, None)
        self.stale.discard(uri)
        self.pending.pop(uri, None)
        if not self.pulls:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        path = path_of(uri, self.workspace.root_path)
        changed = await self.in_worker(self.linter.close, path)
        self.collector.release()
        if changed:
            self._changed([os.path.abspath(path)])
        self.collect_if_owed()

    async def files_changed(self, paths: Sequence[str], *, created: bool = False) -> None:
        """Files changed on disk (the client's watcher, or a save): the configuration, or the
        helpers of open files. A new module may be the one an import of any open file names
        (one that named nothing found, so depended on no file): every open file is linted."""
        for path in paths:
            await self.in_worker(self.linter.disk_changed, path)
        if created or any(_is_config(path) for path in paths):
            self._outdated(list(self.linted))
        else:
            self._changed([os.path.abspath(path) for path in paths])

    async def watch_files(self) -> None:
        """Ask the client to tell of changes to the project's files, if it can be asked."""
        workspace = self.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace is not None else None
        if watched is None or not watched.dynamic_registration:
            return  # the configuration is still stat'ed before each lint
        watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED]
        options = types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
        registration = types.Registration(
            "tinker-lint-watched-files", types.WORKSPACE_DID_CHANGE_WATCHED_FILES, options
        )
        await self.client_register_capability_async(types.RegistrationParams([registration]))


def _wanted(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a code action of ``kind`` is asked for: ``only`` lists kinds or their parents
    (``source.fixAll`` asks for ``source.fixAll.tinker-lint``)."""
    if not only:
        return True
    return any(kind == asked or kind.startswith(f"{asked}.") for asked in only)


def _one_per_line_and_code(found: Sequence[Diagnostic]) -> list[Diagnostic]:
    seen: dict[tuple[int, str], Diagnostic] = {}
    for diagnostic in found:
        seen.setdefault((diagnostic.line, diagnostic.code), diagnostic)
    return list(seen.values())


def _is_config(path: str) -> bool:
    name = os.path.basename(path)
    return name in CONFIG_NAMES or (name.startswith("requirements") and name.endswith(".txt"))


def path_of(uri: str, root: str | None) -> str:
    """The file a document is (a ``file:`` URI), else a name in the workspace: an unsaved,
    untitled buffer is linted as a file of the workspace's root, for its configuration."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    if path:
        return path
    name = uri.rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "untitled"
    if not name.endswith(".py"):
        name = f"{name}.py"
    return os.path.join(root or os.getcwd(), name)


def build(max_file_chars: int = SERVER_MAX_FILE_CHARS) -> TinkerLintServer:
    server = TinkerLintServer(max_file_chars)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TinkerLintServer, params: types.InitializedParams) -> None:
        await ls.watch_files()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TinkerLintServer, params: types.DidOpenTextDocumentParams) -> None:
        if not ls.pulls:
            ls.schedule([params.text_document.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TinkerLintServer, params: types.DidChangeTextDocumentParams) -> None:
        if not ls.pulls:
            ls.schedule([params.text_document.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: TinkerLintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = path_of(uri, ls.workspace.root_path)
        if _is_config(path):
            await ls.files_changed([path])
        elif not ls.pulls:
            ls.schedule([uri])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: TinkerLintServer, params: types.DidCloseTextDocumentParams) -> None:
        await ls.closed(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched(ls: TinkerLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [to_fs_path(change.uri) for change in params.changes]
        created = any(c.type == types.FileChangeType.Created for c in params.changes)
        await ls.files_changed([p for p in paths if p], created=created)

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="tinker-lint", inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )
    async def pull(
        ls: TinkerLintServer, params: types.DocumentDiagnosticParams
    ) -> types.RelatedFullDocumentDiagnosticReport:
        linted = await ls.lint(params.text_document.uri)
        items = ls.diagnostics(linted) if linted is not None else []
        ls.collect_when_quiet()
        return types.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
        ),
    )
    async def code_action(
        ls: TinkerLintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        actions = await ls.code_actions(params)
        ls.collect_if_owed()
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TinkerLintServer, params: types.HoverParams) -> types.Hover | None:
        found = await ls.hover(params)
        ls.collect_if_owed()
        return found

    @server.command(FIX_ALL_COMMAND)
    async def fix_all(ls: TinkerLintServer, *args: Any) -> None:
        uri = args[0] if args else None
        if isinstance(uri, dict):
            uri = uri.get("uri")
        if isinstance(uri, str):
            await ls.fix_all(uri)
        ls.collect_if_owed()

    return server


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tinker-lint server",
        description="A Language Server (LSP) over stdio: tinker-lint's findings and fixes in "
        "an editor (docs/server.md).",
    )
    # Clients that start every server with ``--stdio`` (vscode-languageclient's stdio transport).
    parser.add_argument("--stdio", action="store_true", help="talk over stdio (the only way)")
    parser.add_argument(
        "--max-file-chars",
        type=char_count,
        default=SERVER_MAX_FILE_CHARS,
        metavar="N",
        help="Python files longer than this are checked for syntax only and reported as TNK003, "
        f"when their configuration allows more (default: {SERVER_MAX_FILE_CHARS:,}; 0: the "
        "configuration's limit only)",
    )
    args = parser.parse_args(list(argv))
    server = build(args.max_file_chars)
    server.start_io()
    # The client is gone (``exit``, or stdin closed). Leave now, not after a lint still running
    # on the worker thread (a huge file); the analysis thread may be inside libcst's parser,
    # where the interpreter's finalization would abort the process.
    code = 0 if server.protocol._shutdown else 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed by the client, or by pygls
            stream.flush()
    os._exit(code)
