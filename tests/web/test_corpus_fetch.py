"""Issue 30: `crovia verify` and the page agree on fetch records with entry counts: a record that
states them verifies valid under its pinned key, one with a count of the wrong type is invalid
with the same check in both (tests/web/corpus_fetch.py)."""

from __future__ import annotations

import pytest

from tests.web import corpus as c
from tests.web.corpus_fetch import hostile_cases
from tests.web.test_differential import Case, cli_outcome, page_outcomes, pki  # noqa: F401

pytestmark = pytest.mark.slow


def test_fetch_records_with_counts_get_the_expected_verdict_in_both_verifiers(tmp_path, pki):  # noqa: F811
    expected = hostile_cases(tmp_path, pki)
    cases = [Case(e.name, c.receipt_bytes(e.receipt), e.pin, e.headers) for e in expected]
    page = page_outcomes(cases)
    for want, case, got in zip(expected, cases, page, strict=True):
        assert cli_outcome(case) == (want.verdict, want.check), want.name
        assert tuple(got[:2]) == (want.verdict, want.check), (want.name, got)
