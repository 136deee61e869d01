"""`crovia verify` and the page agree on relayed feeds: a fetch record and an item naming their
relay verify valid under the pinned key; a relay that is not a non-empty string is invalid with
`envelope_shape` in both (tests/web/corpus_relay.py)."""

from __future__ import annotations

import pytest

from tests.web import corpus as c
from tests.web.corpus_relay import hostile_cases
from tests.web.test_differential import Case, cli_outcome, page_outcomes, pki  # noqa: F401

pytestmark = pytest.mark.slow


def test_relayed_receipts_get_the_expected_verdict_in_both_verifiers(tmp_path, pki):  # noqa: F811
    expected = hostile_cases(tmp_path, pki)
    cases = [Case(e.name, c.receipt_bytes(e.receipt), e.pin, e.headers) for e in expected]
    page = page_outcomes(cases)
    for want, case, got in zip(expected, cases, page, strict=True):
        assert cli_outcome(case) == (want.verdict, want.check), want.name
        assert tuple(got[:2]) == (want.verdict, want.check), (want.name, got)
