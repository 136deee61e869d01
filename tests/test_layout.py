"""The shape of the house (docs/design.md): `ledger/` stands alone, and the data flows one way."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_IN_LEDGER = ("scrapy", "twisted", "crovia_spider", "pipelines")


def _imported_roots(package: str) -> set[tuple[str, str]]:
    """(module file, top-level package imported) for every import statement under `package`."""
    found = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found.update((str(path.relative_to(ROOT)), name.split(".")[0]) for name in names)
    return found


def test_ledger_imports_nothing_of_the_crawler():
    bad = {(f, m) for f, m in _imported_roots("ledger") if m in FORBIDDEN_IN_LEDGER}
    assert not bad


def test_crovia_spider_never_imports_pipelines():
    assert not {(f, m) for f, m in _imported_roots("crovia_spider") if m == "pipelines"}


@pytest.mark.parametrize(
    "code",
    [
        "import ledger",
        "import ledger.receipt, ledger.audit, ledger.store, ledger.publish, ledger.monitor",
        "import sys\nfrom crovia_spider.cli import main\n"
        "sys.argv = ['crovia', 'verify', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass",
    ],
)
def test_loading_the_verifier_loads_no_crawler(code):
    probe = code + "\nimport sys\nprint(','.join(sorted({m.split('.')[0] for m in sys.modules})))"
    out = (
        subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    loaded = set(out.split(","))
    assert not loaded & {"scrapy", "twisted", "pipelines"}, loaded
    if "crovia_spider" not in code:
        assert "crovia_spider" not in loaded


# docs/design.md, "The ledger's rooms": a module imports its own room or a lower rank, never a
# higher one nor another room of its own rank.
ROOM_RANKS = {
    "": 0,
    "records": 0.5,  # the record kinds: above the format root, below every other room
    "tlog": 1,
    "keys": 1,
    "stamps": 2,
    "receipt": 3,
    "store": 4,
    "audit": 5,
    "publish": 5,
    "changes": 5,
    "monitor": 6,
}
ROOT_MODULES_MAX = 10
# The format root: the envelope and the seal beside the shared formats (canonical, exceptions,
# jsonl, key_ids, lock, merkle); the kinds of records the log signs are a room of their own
# (ledger/records/: fetch, capture, coverage, and their shapes).
LEDGER_ROOT_MODULES_MAX = 10


def _room_of(module: str) -> str:
    """'ledger.store.reader' -> 'store'; 'ledger.canonical' or 'ledger' -> '' (the format root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOM_RANKS else ""


def _ledger_imports() -> list[tuple[str, str]]:
    """(importing module, imported ledger module) for every import under ledger/, at any depth
    (imports inside functions count: they run too)."""
    found = []
    for path in sorted((ROOT / "ledger").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        package = module if rel.name == "__init__" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from ledger import jsonl` imports the module ledger.jsonl
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            found.extend((module, t) for t in targets if t.split(".")[0] == "ledger")
    return found


def test_every_room_has_its_docstring():
    for init in sorted((ROOT / "ledger").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 20, f"{init}: a room says what it holds"
        assert init.parent.name in ROOM_RANKS, f"{init.parent.name}: a room with no rank"


def test_ledger_root_holds_few_modules():
    modules = [p for p in (ROOT / "ledger").glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= LEDGER_ROOT_MODULES_MAX, sorted(p.name for p in modules)


def test_ledger_imports_run_one_way():
    bad = []
    for module, target in _ledger_imports():
        mine, theirs = _room_of(module), _room_of(target)
        if mine == theirs:
            continue
        if ROOM_RANKS[theirs] >= ROOM_RANKS[mine]:
            bad.append(f"{module} ({mine or 'root'}) imports {target} ({theirs or 'root'})")
    assert not bad, "\n".join(bad)


def test_the_one_way_rule_sees_a_violation():
    """The rule above is not vacuous: the rooms do import each other, downward."""
    pairs = {(_room_of(m), _room_of(t)) for m, t in _ledger_imports()}
    assert ("store", "receipt") in pairs and ("monitor", "audit") in pairs
    assert ROOM_RANKS[_room_of("ledger.monitor.follow")] > ROOM_RANKS[_room_of("ledger.store")]


def test_front_ends_import_rooms_not_their_modules():
    """The CLI, services, pipelines and bench import a room (`ledger.store`), or a root module."""
    bad = []
    for package in ("crovia_spider", "pipelines", "bench"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    parts = node.module.split(".")
                    if (
                        parts[0] == "ledger"
                        and len(parts) > 2
                        and parts[1] not in ("tlog", "stamps", "records")
                    ):
                        bad.append(f"{path.relative_to(ROOT)}: from {node.module}")
    assert not bad, "\n".join(bad)


# docs/design.md, "The crawler's rooms": `crovia_spider/` in rooms by concern, as `ledger/` is. A
# module imports its own room or a lower rank; the package root (options, exceptions, items,
# settings, suggest, the demo) imports no room, except `__main__`, the entry point, which runs the
# CLI.
SPIDER_ROOM_RANKS = {
    "": 0,
    "config": 1,
    "runs": 1,
    "feed": 2,
    "schedule": 2,
    "web": 2,
    "commands": 2,
    "archive": 2,
    "changes": 2,
    "fetching": 3,
    "services": 3,
    "capture": 3,
    "cluster": 3,
    "spiders": 4,
    "notify": 4,
    "cli": 5,
}
ROOT_MODULE_NAMES_EXEMPT = ("__init__.py",)


def _spider_room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SPIDER_ROOM_RANKS else ""


def _spider_imports() -> list[tuple[str, str]]:
    """(importing module, imported crovia_spider module) for every import under crovia_spider/,
    at any depth; `from crovia_spider.x import y` counts as importing the module crovia_spider.x.y
    when y is a module, else crovia_spider.x."""
    found = []
    for path in sorted((ROOT / "crovia_spider").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                base = node.module
                targets = []
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    is_module = (ROOT / Path(*candidate.split("."))).with_suffix(".py").exists()
                    is_room = (ROOT / Path(*candidate.split("."))).is_dir()
                    targets.append(candidate if is_module or is_room else base)
            else:
                continue
            found.extend((module, t) for t in targets if t.split(".")[0] == "crovia_spider")
    return found


def test_crovia_spider_root_holds_few_modules():
    modules = [
        p.name
        for p in (ROOT / "crovia_spider").glob("*.py")
        if p.name not in ROOT_MODULE_NAMES_EXEMPT
    ]
    assert len(modules) <= ROOT_MODULES_MAX, sorted(modules)


def test_every_crovia_spider_room_has_its_docstring():
    for init in sorted((ROOT / "crovia_spider").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 20, f"{init}: a room says what it holds"
        assert init.parent.name in SPIDER_ROOM_RANKS, f"{init.parent.name}: a room with no rank"


def test_crovia_spider_imports_run_one_way():
    bad = []
    for module, target in _spider_imports():
        mine, theirs = _spider_room_of(module), _spider_room_of(target)
        if mine == theirs or module == "crovia_spider.__main__":
            continue
        if SPIDER_ROOM_RANKS[theirs] >= SPIDER_ROOM_RANKS[mine]:
            bad.append(f"{module} ({mine or 'root'}) imports {target} ({theirs or 'root'})")
    assert not bad, "\n".join(bad)


def test_the_crawlers_one_way_rule_sees_a_violation():
    """Not vacuous: the rooms do import each other, downward, and the rule would see upward."""
    pairs = {(_spider_room_of(m), _spider_room_of(t)) for m, t in _spider_imports()}
    assert ("spiders", "fetching") in pairs and ("cli", "config") in pairs
    assert ("fetching", "feed") in pairs and ("spiders", "runs") in pairs
    assert _spider_room_of("crovia_spider.spiders.base") == "spiders"
    assert _spider_room_of("crovia_spider.options") == ""


def _circles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around a circle (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_crovia_spider_imports_no_circle():
    """No module of crovia_spider/ imports one that imports it back, however far round and even
    inside a function: a spider's parts depend on the base, never the base on them."""
    assert _circles(_spider_imports()) == []


def test_the_circle_rule_sees_a_circle():
    assert _circles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == [["a", "b", "c"]]
