"""Does `tinker-lint server` say what the command says, on real projects?

    python3 bench/server_parity.py --corpus DIR [--corpus DIR ...]   (a materialised corpus: bench/ecosystem.py)

For each project (a directory of the corpus, as `bench/ecosystem.py materialise` writes them),
runs `tinker-lint --no-cache --output-format json .` in it, then starts one server rooted there,
opens every Python file of the project and waits for each file's diagnostics. Prints per project
the findings of each, then the total and every file where the (code, line, column) sets differ.
Exit 1 if any differ. The paths of the pinned corpora hold `+` (owner+name), which clients quote
in URIs: the server once answered none of them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.checkout import checkout_env  # noqa: E402  (the tests' helpers: this checkout's env)
from tests.lsp_client import LspClient  # noqa: E402

Finding = tuple[str, int, int]


def command_findings(project: Path) -> dict[str, set[Finding]]:
    command = [sys.executable, "-m", "tinker_lint", "--no-cache", "--output-format", "json", "."]
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, env=checkout_env(), check=False
    )
    found: dict[str, set[Finding]] = {}
    for item in json.loads(done.stdout or "[]"):
        where = str((project / item["filename"]).resolve())
        location = item["location"]
        found.setdefault(where, set()).add((item["code"], location["row"], location["column"]))
    return found


def server_findings(project: Path, files: list[Path]) -> dict[str, set[Finding]]:
    found: dict[str, set[Finding]] = {}
    client = LspClient(cwd=project)
    try:
        client.initialize(project)
        marks = {path: client.open(path) for path in files}
        for path in files:
            try:
                diagnostics = client.diagnostics(path, after=marks[path], version=1)
            except AssertionError:  # none published in time: a difference, not a crash
                diagnostics = [{"code": "(none published)", "range": {"start": {}}}]
            found[str(path.resolve())] = {
                (
                    d["code"],
                    d["range"]["start"].get("line", -2) + 1,
                    d["range"]["start"].get("character", -2) + 1,
                )
                for d in diagnostics
            }
        client.stop()
    finally:
        client.kill()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, action="append", required=True)
    args = parser.parse_args(argv)
    total = agreed = 0
    differing: list[tuple[str, list[Finding], list[Finding]]] = []
    for corpus in args.corpus:
        for project in sorted(p for p in corpus.iterdir() if p.is_dir()):
            files = sorted(project.rglob("*.py"))
            if not files:
                continue
            command = command_findings(project)
            server = server_findings(project, files)
            for path in files:
                key = str(path.resolve())
                ours, theirs = command.get(key, set()), server.get(key, set())
                total += len(ours | theirs)
                agreed += len(ours & theirs)
                if ours != theirs:
                    differing.append((key, sorted(ours - theirs), sorted(theirs - ours)))
            counts = [
                sum(len(table.get(str(p.resolve()), ())) for p in files)
                for table in (command, server)
            ]
            print(f"{project.name}: {len(files)} files, command {counts[0]}, server {counts[1]}")
    print(f"findings: {total}, the same in both: {agreed}, files that differ: {len(differing)}")
    for key, command_only, server_only in differing:
        print(f"  {key}: command only {command_only}, server only {server_only}")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
