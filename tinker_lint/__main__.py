from tinker_lint.cli import entry

raise SystemExit(entry())
