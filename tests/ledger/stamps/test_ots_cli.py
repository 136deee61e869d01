"""Acceptance of OpenTimestamps stamping against a loopback calendar: submit, a pending receipt,
upgrade to a Bitcoin attestation, and verification against the synthetic block header.
"""

from __future__ import annotations

import base64
import json

import pytest

from ledger.canonical import canonical_json
from ledger.exceptions import OtsInvalid
from ledger.receipt import verify_receipt
from ledger.stamps import ots
from tests.ledger.stamps.calendar_server import BLOCK_TIME, HEIGHT, LoopbackCalendar
from tests.ledger.stamps.conftest import crovia, first_axiom


def prove(base) -> dict:
    proc = crovia(base, "prove", first_axiom(base), "--out", str(base / "receipt.json"), "--force")
    assert proc.returncode == 0, proc.stderr
    return json.loads((base / "receipt.json").read_bytes())


def test_submit_pending_upgrade_and_verify_against_the_block_header(work):
    with LoopbackCalendar() as cal:
        stamp = crovia(work, "stamp", CROVIA_OTS_CALENDARS=cal.url)
        assert stamp.returncode == 0 and "1 OpenTimestamps submissions kept" in stamp.stdout
        pending = prove(work)
        early = crovia(work, "stamp", "--upgrade", CROVIA_OTS_CALENDARS=cal.url)
        cal.mine()
        upgrade = crovia(work, "stamp", "--upgrade", CROVIA_OTS_CALENDARS=cal.url)
        (commitment,) = cal.commitments
    anchor = pending["bitcoin_anchor"]
    assert anchor["status"] == "pending_next_stamp"
    assert anchor["calendar_attestations"] == [cal.url] and anchor["ots_url"] == cal.url
    assert anchor["bitcoin_attestations"] == [] and anchor["stamped_at"].endswith("Z")
    verified = crovia(work, "verify", str(work / "receipt.json"), "--any-key")
    assert verified.returncode == 0 and f"pending at calendar {cal.url}" in verified.stdout
    assert "0 proofs upgraded to Bitcoin, 1 still pending" in early.stdout, early.stdout
    assert "1 proofs upgraded to Bitcoin" in upgrade.stdout, upgrade.stdout

    confirmed = prove(work)["bitcoin_anchor"]
    header = LoopbackCalendar.header(commitment)
    (claim,) = confirmed["bitcoin_attestations"]
    assert confirmed["status"] == "confirmed" and confirmed["calendar_attestations"] == []
    assert claim == {"block_height": HEIGHT, "merkle_root": header[36:68][::-1].hex()}
    pin = ("--any-key",)
    checked = crovia(
        work, "verify", str(work / "receipt.json"), *pin, "--bitcoin-header", header.hex()
    )
    assert checked.returncode == 0, checked.stderr
    assert f"Bitcoin block {HEIGHT} must have merkle root {claim['merkle_root']}" in checked.stdout
    assert "pinned third party: 2024-04-20T00:09:27Z (Bitcoin block 840000)" in checked.stdout
    unchecked = crovia(work, "verify", str(work / "receipt.json"), *pin)
    assert "not checked: give --bitcoin-header" in unchecked.stdout
    other = bytearray(header)
    other[40] ^= 1
    wrong = crovia(
        work, "verify", str(work / "receipt.json"), *pin, "--bitcoin-header", other.hex()
    )
    assert wrong.returncode == 1 and "check opentimestamps failed" in wrong.stderr
    stats = crovia(work, "stats", "--json")
    assert json.loads(stats.stdout)["stamps"]["ots_confirmed"] == 1
    assert BLOCK_TIME == 1_713_571_767


def test_a_changed_byte_status_or_claim_of_a_confirmed_proof_fails_verification(work):
    """A pending proof claims nothing checkable offline (a changed op still ends at the same
    calendar); a confirmed one fixes a merkle root, so every changed byte is caught.
    """
    with LoopbackCalendar() as cal:
        crovia(work, "stamp", CROVIA_OTS_CALENDARS=cal.url)
        cal.mine()
        crovia(work, "stamp", "--upgrade", CROVIA_OTS_CALENDARS=cal.url)
        (commitment,) = cal.commitments
        receipt = prove(work)
    headers = [LoopbackCalendar.header(commitment)]
    proof = base64.b64decode(receipt["bitcoin_anchor"]["ots_proof_base64"])
    verify_receipt(receipt, bitcoin_headers=headers)
    changes = {
        "status": ("status", "pending_next_stamp"),
        "calendar": ("calendar_attestations", ["http://127.0.0.2:1"]),
        "bitcoin": ("bitcoin_attestations", [{"block_height": 1, "merkle_root": "00" * 32}]),
    }
    for key, value in changes.values():
        mutated = json.loads(json.dumps(receipt))
        mutated["bitcoin_anchor"][key] = value
        with pytest.raises(OtsInvalid):
            verify_receipt(mutated, bitcoin_headers=headers)
    for position in range(len(proof)):
        changed = bytearray(proof)
        changed[position] ^= 0x01
        mutated = json.loads(json.dumps(receipt))
        mutated["bitcoin_anchor"]["ots_proof_base64"] = base64.b64encode(changed).decode()
        try:
            verify_receipt(mutated, bitcoin_headers=headers)
        except OtsInvalid:
            continue
        summary = ots.summarize(ots.load_detached(bytes(changed)).timestamp)
        pytest.fail(f"a changed byte {position} passed: {summary}")


def test_a_proof_of_another_seal_fails_and_a_claim_without_proof_is_refused(work, crawled):
    with LoopbackCalendar() as cal:
        crovia(work, "stamp", CROVIA_OTS_CALENDARS=cal.url)
        receipt = prove(work)
    mutated = json.loads(json.dumps(receipt))
    mutated["seal"]["run_id"] = "another"
    from ledger.stamps.check import verify_stamps

    with pytest.raises(OtsInvalid, match="does not start at sha256 of the seal"):
        verify_stamps(mutated)
    del receipt["bitcoin_anchor"]["ots_proof_base64"]
    (work / "claim.json").write_bytes(canonical_json(receipt))  # exact bytes: verify reads them
    proc = crovia(work, "verify", str(work / "claim.json"), "--any-key")
    assert proc.returncode == 1 and "check bitcoin_anchor failed" in proc.stderr


def test_a_calendar_that_is_down_is_recorded_and_retried(work):
    from crovia_spider.demo_tsa import closed_port_url

    down = closed_port_url()
    proc = crovia(work, "stamp", CROVIA_OTS_CALENDARS=down)
    assert proc.returncode == 0 and "ots_submit" in proc.stdout
    assert prove(work)["bitcoin_anchor"]["status"] == "not_stamped"
    with LoopbackCalendar() as cal:
        crovia(work, "stamp", CROVIA_OTS_CALENDARS=f"{down},{cal.url}")
    assert prove(work)["bitcoin_anchor"]["calendar_attestations"] == [cal.url]


@pytest.mark.parametrize("claim", ["also", "only"])
def test_a_submit_reply_claiming_bitcoin_is_stored_as_pending(work, claim):
    """Issue 16, obs 6: a calendar's word is not a confirmation; only --upgrade confirms."""
    with LoopbackCalendar(claim_bitcoin=claim) as cal:
        stamp = crovia(work, "stamp", CROVIA_OTS_CALENDARS=cal.url)
        assert stamp.returncode == 0, stamp.stderr
        anchor = prove(work)["bitcoin_anchor"]
        assert anchor["status"] == "pending_next_stamp" and anchor["bitcoin_attestations"] == []
        assert anchor["calendar_attestations"] == [cal.url]
        proof = ots.load_detached(base64.b64decode(anchor["ots_proof_base64"]))
        assert not ots.summarize(proof.timestamp).bitcoin
        stats = json.loads(crovia(work, "stats", "--json").stdout)["stamps"]
        assert (stats["ots_pending"], stats["ots_confirmed"]) == (1, 0)
        cal.mine()
        upgrade = crovia(work, "stamp", "--upgrade", CROVIA_OTS_CALENDARS=cal.url)
        assert "1 proofs upgraded to Bitcoin" in upgrade.stdout, upgrade.stdout
    assert prove(work)["bitcoin_anchor"]["status"] == "confirmed"
