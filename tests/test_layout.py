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
        "import ledger.verify, ledger.audit, ledger.store, ledger.receipt",
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
