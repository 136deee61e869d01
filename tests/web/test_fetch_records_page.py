"""Issue 18: the page accepts fetch-record receipts (AX.FETCH) exactly as `crovia verify` does,
and rejects every mutation of one with the same check."""

from __future__ import annotations

import json

import pytest

from tests.crawl import fetch_records
from tests.vectors.make_vectors import mutations
from tests.web.conftest import Site
from tests.web.test_agreement import cli_verdict, page_verdicts, receipt_bytes

pytestmark = pytest.mark.slow


def test_every_fetch_record_verifies_on_the_page_and_its_mutations_agree(site: Site, page):
    records = fetch_records(site.ledger_dir.parent)
    assert len(records) == 2  # one per feed of the crawl
    receipts = [
        json.loads((site.directory / "receipts" / f"{r['axiom_id']}.json").read_bytes())
        for r in records
    ]
    assert {r["envelope"]["axiom_type"] for r in receipts} == {"AX.FETCH"}
    cases = [receipt_bytes(r) for r in receipts]
    cases += [receipt_bytes(m.receipt) for m in mutations(receipts[0])]
    page.goto(site.url("/v/"))
    page.wait_for_function("() => globalThis.CroviaVerify !== undefined")
    expected = [cli_verdict(case) for case in cases]
    assert expected[: len(receipts)] == [None] * len(receipts)
    assert sum(1 for e in expected if e) > 500
    got = page_verdicts(page, cases)
    disagreements = [
        (i, e, g) for i, (e, g) in enumerate(zip(expected, got, strict=True)) if e != g
    ]
    assert not disagreements, disagreements[:10]
