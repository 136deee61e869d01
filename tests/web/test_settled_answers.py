"""Issue 47, item 8: the answers the documents left open, settled and held by both verifiers. The
integer range (-2**63 to 2**64 - 1), the seal's fixed schema, kind and family, and the
duplicate_last sibling: each corpus module's cases (tests/web/corpus_integers.py,
corpus_seal_kind.py, corpus_duplicate_last.py) get their expected verdict and first failing check
from `crovia verify`'s own function and from the page's scripts under Node. The same cases run
in the whole differential corpus (tests/web/test_differential.py); this file runs them alone.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tests.web import corpus as c
from tests.web.test_differential import Case, cli_outcome, page_outcomes

pytestmark = pytest.mark.slow

MODULES = ("corpus_integers", "corpus_seal_kind", "corpus_duplicate_last")


def _cases(work: Path, module: str) -> list[tuple[Case, c.Expected]]:
    loaded = importlib.import_module(f"tests.web.{module}")
    return [
        (Case(want.name, c.receipt_bytes(want.receipt), want.pin, want.headers), want)
        for want in loaded.hostile_cases(work / module, None)
    ]


@pytest.mark.parametrize("module", MODULES)
def test_crovia_verify_and_the_page_give_the_settled_verdicts(tmp_path: Path, module: str) -> None:
    cases = _cases(tmp_path, module)
    expected = [(want.verdict, want.check) for _case, want in cases]
    cli = [cli_outcome(case) for case, _want in cases]
    page = [tuple(row[:2]) for row in page_outcomes([case for case, _want in cases])]
    names = [case.name for case, _want in cases]
    wrong = [
        (name, want, got_cli, got_page)
        for name, want, got_cli, got_page in zip(names, expected, cli, page, strict=True)
        if not want == got_cli == got_page
    ]
    assert not wrong, wrong
    assert {"valid", "invalid"} <= {want[0] for want in expected}
