"""The page and `crovia verify` agree on every receipt: ours, the reference one, and every
systematic mutation of both (tests/vectors/make_vectors.py), check name for check name."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from ledger.canonical import canonical_json
from ledger.exceptions import CanonicalizationError, VerificationError
from ledger.receipt import verify_receipt_bytes
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
    """The check `crovia verify` names for these bytes (the function it runs on a file's bytes),
    or None when it accepts them."""
    try:
        verify_receipt_bytes(data)
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
                // no pin: "unpinned" is every check passing (crovia verify without a pin)
                const ok = report.verdict === "valid" || report.verdict === "unpinned";
                out.push(ok ? null : report.failed || report.verdict);
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


def test_receipts_across_a_key_rotation_agree(site: Site, page: object, tmp_path: Path) -> None:
    import nacl.signing

    from ledger.store import Ledger
    from tests.vectors.make_vectors import TEST_KEY, sample_envelope

    with Ledger.open(tmp_path / "ledger", signing_key=TEST_KEY) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(3)])
        ledger.rotate_key(nacl.signing.SigningKey(b"\x07" * 32))
        issued += ledger.issue([sample_envelope(n) for n in range(3, 6)])
        ledger.seal()
    with Ledger.open(tmp_path / "ledger") as reader:
        receipts = [reader.receipt(item.axiom_id) for item in issued]
    assert all("key_rotations" in receipt for receipt in receipts)
    cases = [receipt_bytes(r) for r in receipts]
    for receipt in (receipts[0], receipts[-1]):
        cases += [receipt_bytes(changed) for changed in rotation_changes(receipt)]
    page.goto(site.url("/v/"))
    page.wait_for_function("() => globalThis.CroviaVerify !== undefined")
    expected = [cli_verdict(case) for case in cases]
    assert expected[: len(receipts)] == [None] * len(receipts)
    assert "key_rotation" in expected
    got = page_verdicts(page, cases)
    pairs = enumerate(zip(expected, got, strict=True))
    disagreements = [(i, e, g) for i, (e, g) in pairs if e != g]
    assert not disagreements, disagreements[:10]


def rotation_changes(receipt: dict) -> list[dict]:
    """The receipt with each field of its rotation record changed, and each one removed."""
    import copy

    out = []
    for name, value in receipt["key_rotations"][0].items():
        changed = copy.deepcopy(receipt)
        record = changed["key_rotations"][0]
        if isinstance(value, int):
            record[name] = value + 1
        else:
            record[name] = value[:-1] + ("0" if value[-1:] != "0" else "1")
        out.append(changed)
        removed = copy.deepcopy(receipt)
        del removed["key_rotations"][0][name]
        out.append(removed)
    return out
