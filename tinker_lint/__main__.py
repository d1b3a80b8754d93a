from tinker_lint.cli import main

raise SystemExit(main())
