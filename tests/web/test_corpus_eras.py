"""Key eras and ASCII time fields (tests/web/corpus_eras.py): the page's core under Node and
`crovia verify`'s own function give each hostile receipt exactly its expected verdict and name
the same failed check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web import corpus as c
from tests.web import corpus_eras
from tests.web.test_differential import Case, cli_outcome, page_outcomes

pytestmark = pytest.mark.slow


def test_every_era_and_digit_case_has_its_expected_verdict_in_both_verifiers(
    tmp_path: Path,
) -> None:
    expected = corpus_eras.hostile_cases(tmp_path, None)
    cases = [Case(e.name, c.receipt_bytes(e.receipt), e.pin, e.headers) for e in expected]
    page = page_outcomes(cases)
    wrong = []
    for want, case, have in zip(expected, cases, page, strict=True):
        target = (want.verdict, want.check)
        cli = cli_outcome(case)
        if cli != target or tuple(have[:2]) != target:
            wrong.append((want.name, target, cli, tuple(have)))
    assert not wrong, wrong
    assert len(expected) >= 25
