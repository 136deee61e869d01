"""The page and `crovia verify` agree on every receipt: ours, the reference one, and every
systematic mutation of both (tests/vectors/make_vectors.py), check name for check name."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from ledger.canonical import canonical_json
from ledger.exceptions import CanonicalizationError, VerificationError
from ledger.verify import verify_receipt
from tests.vectors.make_vectors import build_ledger, mutations, seed_receipt
from tests.web.conftest import Site

pytestmark = pytest.mark.slow


def receipt_bytes(receipt: dict) -> bytes:
    """The bytes of a (possibly mutated) receipt: canonical where it can be, else the stdlib's."""
    try:
        return canonical_json(receipt)
    except CanonicalizationError:
        return json.dumps(receipt, sort_keys=True, separators=(",", ":")).encode()


def cli_verdict(data: bytes) -> str | None:
    """The check `crovia verify` names for these bytes, or None when it accepts them."""
    try:
        receipt = json.loads(data)
        if canonical_json(receipt) != data:
            return "canonical_bytes"
        verify_receipt(receipt)
    except CanonicalizationError:
        return "canonical_bytes"
    except VerificationError as exc:
        return exc.check
    return None


def page_verdicts(page: object, cases: list[bytes]) -> list[str | None]:
    """Run the page's verification core on each case, in the served page itself."""
    return page.evaluate(
        """async (cases) => {
            const out = [];
            for (const b64 of cases) {
                const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
                const report = await CroviaVerify.verifyReceiptBytes(bytes, null);
                out.push(report.verdict === "valid" ? null : report.failed || report.verdict);
            }
            return out;
        }""",
        [base64.b64encode(case).decode() for case in cases],
    )


def test_page_and_cli_agree_on_every_mutation(site: Site, page: object, tmp_path: Path) -> None:
    ours = build_ledger(tmp_path / "vectors", 13)
    bases = [seed_receipt(), ours[0], ours[6], ours[12]]
    crawled = site.directory / "receipts" / f"{site.axiom_ids[0]}.json"
    bases.append(json.loads(crawled.read_bytes()))
    cases = [receipt_bytes(base) for base in bases]
    cases += [receipt_bytes(m.receipt) for base in bases for m in mutations(base)]
    page.goto(site.url("/v/"))
    page.wait_for_function("() => globalThis.CroviaVerify !== undefined")
    expected = [cli_verdict(case) for case in cases]
    assert expected[: len(bases)] == [None] * len(bases)
    assert sum(1 for e in expected if e) > 1000
    got = page_verdicts(page, cases)
    pairs = enumerate(zip(expected, got, strict=True))
    disagreements = [(i, e, g) for i, (e, g) in pairs if e != g]
    assert not disagreements, disagreements[:10]


def test_a_rejected_mutation_is_shown_invalid_with_the_same_check(site: Site, page: object):
    from tests.web.test_page import verdict_of

    samples = site.directory / "samples"
    shown = 0
    for number, mutation in enumerate(mutations(seed_receipt())):
        if mutation.check is None or number % 97:
            continue
        data = receipt_bytes(mutation.receipt)
        (samples / f"m{number}.json").write_bytes(data)
        page.goto(site.url(f"/v/?src=/samples/m{number}.json"))
        result = verdict_of(page)
        assert result["verdict"] == "invalid", mutation.name
        assert result["failed"] == cli_verdict(data), mutation.name
        assert result["checks"][result["failed"]] == "false"
        shown += 1
    assert shown >= 10
