"""The pre-filters: what a file's text and CPython's tree of it must hold for a rule to find anything. No libcst here."""
