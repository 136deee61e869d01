"""Coverage records (AX.COVERAGE) in both verifiers: every case of tests/web/corpus_coverage.py
gets the same verdict and first failing check from `crovia verify`'s function and from the page's
core under Node, and the one expected, each refusal in the same words (the whole differential
corpus holds them too, in tests/web/test_differential.py; this runs them alone, in seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.exceptions import EnvelopeMalformed
from ledger.records.shape import check_envelope_shape
from tests.web import corpus as c
from tests.web.corpus_coverage import hostile_cases
from tests.web.test_differential import Case, cli_outcome, page_outcomes

# The page's core runs under Node, a process of its own (test_differential.page_outcomes).
pytestmark = pytest.mark.slow


def test_both_verifiers_agree_on_every_coverage_case(tmp_path: Path) -> None:
    wanted = hostile_cases(tmp_path, None)
    cases = [Case(want.name, c.receipt_bytes(want.receipt), want.pin) for want in wanted]
    expected = [cli_outcome(case) for case in cases]
    assert expected == [(want.verdict, want.check) for want in wanted], [
        (want.name, have) for want, have in zip(wanted, expected, strict=True)
        if have != (want.verdict, want.check)
    ]  # fmt: skip
    got = page_outcomes(cases)
    disagreements = [
        (case.name, want, tuple(have[:2]))
        for case, want, have in zip(cases, expected, got, strict=True)
        if want != tuple(have[:2])
    ]
    assert not disagreements, disagreements
    assert sum(want.verdict == "invalid" for want in wanted) >= 35
    # and the same words: the page's message of each refusal is the rule ledger/records/ names
    worded = [
        (want.name, _shape_problem(want.receipt["envelope"]), have[2])
        for want, have in zip(wanted, got, strict=True)
        if want.verdict == "invalid" and have[2] != _shape_problem(want.receipt["envelope"])
    ]
    assert not worded, worded


def _shape_problem(envelope: dict) -> str:
    """The message of the rule `crovia verify`'s envelope_shape check refuses `envelope` by."""
    with pytest.raises(EnvelopeMalformed) as refused:
        check_envelope_shape(envelope, anchor=False)
    return refused.value.args[0]
