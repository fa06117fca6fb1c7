#!/usr/bin/env python3
"""Layering of rtc's packages, read from every import (module level and inside functions).

usage: python3 tools/check_layers.py [-v]   (from the repository root, or anywhere)

:data:`STAGES` is the stage order: a package imports only packages of its own stage or of
stages above it in the list. docs/architecture.md's package table shows the same
rows in the same order (``tests/test_architecture.py`` checks both, and runs this check).

Prints upward imports (a stage importing a later one), package cycles, file-level import
cycles, dynamic imports and private names imported across modules (``from m import _x``: a
helper several modules share is public in its own module) in rtc/, and a last line
``architecture: U upward imports, C package cycles, F file cycles, D dynamic imports,
P private imports``. Exit 0 only when all five are zero.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: The stages, first to last: each row holds the packages (or top-level modules, without
#: ``.py``) of one stage of rtc/. parse -> lower -> plan -> check -> emit -> report -> api ->
#: cli, with the libraries below the model, the cost model below the plan and the checks,
#: preflight judging beside the plan, tables / scripts as front ends over the checks, and
#: the catalogue of every rule (which reads all of them) below the renderers and reports.
STAGES: tuple[tuple[str, ...], ...] = (
    ("diagnostics", "rules", "textfmt", "resources", "forked", "interrupts", "extras",
     "readfile"),
    ("syntax",),
    ("inventory",),
    ("network",),
    ("parallel",),
    ("model",),
    ("cost",),
    ("schema",),
    ("plan",),
    ("preflight",),
    ("checks",),
    ("tables",),
    ("scripts",),
    ("catalogue",),
    ("emit",),
    ("outputs",),
    ("report",),
    ("api",),
    ("cli", "__main__"),
)


def stage_of(package: str) -> int | None:
    """The index of the package's row in :data:`STAGES`, or None when no row names it."""
    return next((i for i, row in enumerate(STAGES) if package in row), None)


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class Imports:
    """Every import of the sources under ``root`` (the ``rtc`` folder): ``modules`` maps
    each module name to its file; ``edges`` maps (importer, imported module) to the
    ``file:line`` places; ``dynamic`` lists calls of import_module / __import__;
    ``private`` lists ``file:line name`` of each private name (``_x``, not ``__x__``)
    imported from another module."""

    def __init__(self, root: Path) -> None:
        self.root = root
        files = sorted(root.rglob("*.py"))
        self.modules = {_module_name(f, root): f for f in files}
        self.edges: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.dynamic: list[str] = []
        self.private: list[str] = []
        for f in files:
            self._read(f)

    def _where(self, path: Path, line: int) -> str:
        return f"{path.relative_to(self.root.parent).as_posix()}:{line}"

    def _base(self, mod: str, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = mod.split(".")
        if self.modules[mod].name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _targets(self, mod: str, node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = self._base(mod, node)
        subs = [f"{base}.{a.name}" for a in node.names]
        named = [s for s in subs if s in self.modules]
        return named + ([base] if len(named) < len(subs) else [])

    def _read(self, path: Path) -> None:
        mod = _module_name(path, self.root)
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Call):
                fn = n.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                if name in ("import_module", "__import__"):
                    self.dynamic.append(self._where(path, n.lineno))
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                if isinstance(n, ast.ImportFrom) and n.module != "__future__":
                    self.private += [f"{self._where(path, n.lineno)} {a.name}" for a in n.names
                                     if a.name.startswith("_") and not a.name.startswith("__")]
                for t in self._targets(mod, n):
                    if t.split(".")[0] == self.root.name and t != mod:
                        self.edges[(mod, t)].append(self._where(path, n.lineno))

    def package_edges(self) -> dict[tuple[str, str], list[str]]:
        """(package, package) -> places, for imports between two packages of rtc/."""
        out: dict[tuple[str, str], list[str]] = defaultdict(list)
        for (a, b), where in self.edges.items():
            pa, pb = a.split(".")[1:2], b.split(".")[1:2]
            if pa and pb and pa != pb:
                out[(pa[0], pb[0])] += where
        return out


def upward(edges: dict[tuple[str, str], list[str]]) -> list[tuple[str, str, list[str]]]:
    """Imports of a package from a later stage (or of / from a package no stage names)."""
    out = []
    for (a, b), where in sorted(edges.items()):
        sa, sb = stage_of(a), stage_of(b)
        if sa is None or sb is None or sb > sa:
            out.append((a, b, where))
    return out


def cycles(edges) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    graph: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        graph[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv: list[str]) -> int:
    imports = Imports(REPO / "rtc")
    edges = imports.package_edges()
    up = upward(edges)
    package_cycles = cycles(edges)
    file_cycles = cycles(imports.edges)
    shown = 50 if "-v" in argv else 5
    for a, b, where in up[:25]:
        print(f"upward: rtc/{a} -> rtc/{b} ({len(where)}x, e.g. {where[0]})")
    for c in package_cycles:
        print("cycle: " + " <-> ".join(f"rtc/{p}" for p in c))
    for c in file_cycles:
        print("file cycle: " + " <-> ".join(c))
    for d in imports.dynamic[:shown]:
        print(f"dynamic import: {d}")
    for d in imports.private[:shown]:
        print(f"private import: {d}")
    n_up = sum(len(w) for _, _, w in up)
    print(f"architecture: {n_up} upward imports, {len(package_cycles)} package cycles, "
          f"{len(file_cycles)} file cycles, {len(imports.dynamic)} dynamic imports, "
          f"{len(imports.private)} private imports")
    return 0 if not (n_up or package_cycles or file_cycles or imports.dynamic
                     or imports.private) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
