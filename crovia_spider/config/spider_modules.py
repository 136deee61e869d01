"""The spider names the project's spider modules define, read from their source, not imported.

`crovia feeds check` and the other commands that load feeds.toml need them to tell a spider of the
project from a typo (crovia_spider/config/feeds.py), and must not start Scrapy to learn them. A
spider is named by a class attribute `name = "..."` (as `scrapy genspider` writes it); a name
computed at import time is not seen here, only by the crawl's own loader, which imports the modules
(crovia_spider/spiders/spiderloader.py).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path


@functools.cache
def spider_names(modules: tuple[str, ...] | None = None) -> frozenset[str]:
    """Every `name = "..."` of a class in `modules` and their submodules (default: the project's
    SPIDER_MODULES). A module that cannot be found or parsed adds nothing."""
    if modules is None:
        from crovia_spider.settings import SPIDER_MODULES

        modules = tuple(SPIDER_MODULES)
    return frozenset(
        name for module in modules for path in _sources(module) for name in _class_names(path)
    )


def _sources(module: str) -> list[Path]:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return sorted(p for d in spec.submodule_search_locations for p in Path(d).rglob("*.py"))
    return [Path(spec.origin)] if spec.origin and spec.origin.endswith(".py") else []


def _class_names(path: Path) -> set[str]:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return set()
    return {
        stmt.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for stmt in node.body
        if isinstance(stmt, ast.Assign | ast.AnnAssign)
        and any(isinstance(t, ast.Name) and t.id == "name" for t in _targets(stmt))
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    }


def _targets(stmt: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
