"""Module-level import aliases: which local names stand for ``tinker``, ``asyncio`` and friends.

A cheap alias map (the flake8-async approach) instead of libcst's QualifiedNameProvider, which costs
several times the parse and still knows nothing of receiver types.
"""

from __future__ import annotations

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    # Exact types (libcst's node classes are final): ``isinstance`` on them goes through
    # ``ABCMeta`` and is slow, and this is asked of most expressions the rules look at.
    if type(node) is cst.Name:
        return node.value
    parts: list[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _module_name(node: cst.BaseExpression | None) -> str:
    return dotted_name(node) or "" if node is not None else ""


class ImportMap:
    """Local name -> fully qualified name, from every import statement in the module."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.aliases[alias.asname.name.value] = full
                else:
                    top = full.split(".")[0]
                    self.aliases[top] = top
            return
        if isinstance(node.names, cst.ImportStar):
            return
        # A relative import keeps its dots (``.steps.f``): only the project index (which knows the
        # package) makes it absolute; no SDK name starts with a dot.
        module = "." * len(node.relative) + _module_name(node.module)
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{module}.{name}" if not module.endswith(".") else module + name

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """The qualified name ``node`` refers to through an import, e.g. ``tk.ServiceClient``
        -> ``tinker.ServiceClient``; None when its first name is not imported."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full
