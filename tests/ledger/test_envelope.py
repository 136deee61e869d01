"""new_envelope rebuilds the seed's envelope exactly; bad records are refused, saying why."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nacl.signing
import pytest

from ledger.envelope import axiom_id_of, new_envelope, sign_envelope, signed_bytes
from ledger.exceptions import CanonicalizationError, InvalidRecord
from tests.vectors.make_vectors import sample_record

SEED = json.loads((Path(__file__).parents[1] / "vectors" / "seed_axiom_proof.json").read_bytes())
SEED_ENVELOPE = SEED["envelope"]
SEED_RECORD = SEED_ENVELOPE["body"]["spider_record"]


def test_the_seed_envelope_is_rebuilt_from_its_spider_record() -> None:
    built = new_envelope(SEED_RECORD, issued_at=SEED_ENVELOPE["issued_at"])
    # the seed's tsa and anchors are its own placeholders; everything else is derived
    built.update(tsa=SEED_ENVELOPE["tsa"], anchors=SEED_ENVELOPE["anchors"])
    expected = {k: v for k, v in SEED_ENVELOPE.items() if k not in ("axiom_id", "signature")}
    assert built == expected
    assert axiom_id_of(built) == SEED_ENVELOPE["axiom_id"]
    verify_key = nacl.signing.VerifyKey(bytes.fromhex(SEED["seal"]["public_key_hex"]))
    signature = bytes.fromhex(SEED_ENVELOPE["signature"].removeprefix("ed25519:"))
    verify_key.verify(signed_bytes(built), signature)


def test_options_land_where_the_contract_says() -> None:
    predecessor = "axm_" + "ab" * 32
    envelope = new_envelope(
        sample_record(1),
        predecessors=[predecessor],
        object_extra={"item_id": "2606.00001"},
        confidence_extra={"ruleset": "classify-1"},
        issued_at="2026-06-18T04:43:37Z",
        target_id="https://arxiv.org/abs/2606.00001",
    )
    assert envelope["predecessors"] == [predecessor]
    assert envelope["object"]["item_id"] == "2606.00001"
    assert envelope["confidence"] == {"method": "deterministic", "ruleset": "classify-1"}
    assert envelope["subject"] == {
        "observed_at": "2026-06-18T04:00:01Z",
        "source_collector": "spider:vendor_press",
        "target_id": "https://arxiv.org/abs/2606.00001",
    }
    assert envelope["tsa"] == {"authority": "none", "rfc3161_token": ""}
    assert "anchors" not in envelope and "signature" not in envelope


def test_issued_at_defaults_to_now_in_seconds() -> None:
    issued_at = new_envelope(sample_record(1))["issued_at"]
    assert len(issued_at) == 20 and issued_at.endswith("Z")


def test_anchors_are_signed_but_outside_the_id() -> None:
    key = nacl.signing.SigningKey.generate()
    envelope = new_envelope(sample_record(1), issued_at="2026-06-18T04:43:37Z")
    first = sign_envelope(envelope, [{"chain": "c", "height": 1}], key)
    second = sign_envelope(envelope, [{"chain": "c", "height": 2}], key)
    assert first["axiom_id"] == second["axiom_id"]
    assert first["signature"] != second["signature"]


def _without(name: str) -> dict:
    record = sample_record(1)
    del record[name]
    return record


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (_without("vendor"), "missing \\['vendor'\\]"),
        ({**sample_record(1), "extra": "x"}, "unexpected \\['extra'\\]"),
        ({**sample_record(1), "source_status": "200"}, "source_status must be int"),
        ({**sample_record(1), "source_status": True}, "source_status must be int"),
        ({**sample_record(1), "title": None}, "title must be str"),
        ({**sample_record(1), "fingerprint": "AB" * 32}, "fingerprint must be 64 lowercase hex"),
        ({**sample_record(1), "observed_at": "2026-06-18 04:43:37"}, "observed_at"),
        ({**sample_record(1), "envelope_target": "AX.X"}, "envelope_target"),
        ("not a record", "must be a dict"),
    ],
)
def test_a_bad_record_is_refused(record: object, reason: str) -> None:
    with pytest.raises(InvalidRecord, match=reason):
        new_envelope(record)


def test_bad_arguments_are_refused() -> None:
    record = sample_record(1)
    with pytest.raises(InvalidRecord, match="predecessor"):
        new_envelope(record, predecessors=["axm_short"])
    with pytest.raises(InvalidRecord, match="not a string"):
        new_envelope(record, predecessors="axm_" + "0" * 64)
    with pytest.raises(InvalidRecord, match="issued_at"):
        new_envelope(record, issued_at="2026-06-18T04:43:37.5Z")
    with pytest.raises(InvalidRecord, match="target_id"):
        new_envelope(record, target_id="")
    with pytest.raises(CanonicalizationError, match="float"):
        new_envelope(record, confidence_extra={"score": 0.9})
    with pytest.raises(CanonicalizationError, match="float"):
        new_envelope(record, object_extra={"fetch": {"status": 200, "seconds": [0.5]}})
    with pytest.raises(CanonicalizationError, match="64 bits"):
        new_envelope({**record, "source_status": 2**70})


def test_the_caller_record_is_not_aliased() -> None:
    record = sample_record(1)
    envelope = new_envelope(record)
    record["title"] = "changed later"
    assert envelope["body"]["spider_record"]["title"] == sample_record(1)["title"]
    assert copy.deepcopy(envelope) == envelope
