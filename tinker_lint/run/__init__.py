"""Running: the file loop (lint, --fix, --diff), one file through the engine, the results cache, the fixer."""
