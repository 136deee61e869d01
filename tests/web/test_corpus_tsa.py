"""Issue 30, observations 2 and 9, in both verifiers: every case of tests/web/corpus_tsa.py (TSA
paths OpenSSL refuses and their controls, tokens older than their seal, proofs pending at a
calendar the receipt was not submitted to) gets exactly its expected verdict and failing check
from `crovia verify`'s function and from the page's scripts under Node."""

from __future__ import annotations

from pathlib import Path

import pytest

from crovia_spider.demo_tsa import OPENSSL, TestPki
from tests.web import corpus as c
from tests.web.corpus_tsa import hostile_cases
from tests.web.test_differential import Case, cli_outcome, page_outcomes

pytestmark = pytest.mark.slow


def test_each_hostile_stamp_gets_its_verdict_in_both_verifiers(tmp_path: Path) -> None:
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    wanted = hostile_cases(tmp_path / "cases", TestPki(tmp_path / "pki"))
    cases = [Case(w.name, c.receipt_bytes(w.receipt), w.pin, w.headers) for w in wanted]
    cli = [cli_outcome(case) for case in cases]
    page = [tuple(row[:2]) for row in page_outcomes(cases)]
    wrong = [
        (want.name, (want.verdict, want.check), {"cli": got_cli, "page": got_page})
        for want, got_cli, got_page in zip(wanted, cli, page, strict=True)
        if got_cli != (want.verdict, want.check) or got_page != got_cli
    ]
    assert not wrong, (len(wrong), wrong)
    assert {w.verdict for w in wanted} == {"valid", "invalid"}  # controls beside the refusals
    assert len(wanted) >= 30, len(wanted)
