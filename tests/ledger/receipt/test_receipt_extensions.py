"""The receipt and seal extensions the shared contract allows, and nothing else: the seal's
transparency-log fields (both or neither), the top-level `key_rotations` and `rfc3161_timestamps`
(present only with content) and `bitcoin_anchor.ots_proof_base64`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ledger.audit import parse_seals
from ledger.canonical import canonical_json
from ledger.exceptions import ReceiptMalformed, SealInvalid
from ledger.receipt import check_receipt_shape, verify_receipt
from ledger.seal import seal_signed_bytes
from tests.vectors.make_vectors import TEST_KEY, build_ledger, seed_receipt

LOG_FIELDS = {"prev_seal_sha256": "", "rfc6962_root": "ab" * 32}


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_ledger(tmp_path_factory.mktemp("ext") / "ledger", 5)[3]


def _resealed(receipt: dict[str, Any], *drop: str, **fields: Any) -> dict[str, Any]:
    """`receipt` with its seal's keys `drop` removed and `fields` set, signed again."""
    changed = copy.deepcopy(receipt)
    gone = {"signature", "sig_algorithm", *drop}
    seal = {k: v for k, v in changed["seal"].items() if k not in gone}
    seal.update(fields)
    seal["signature"] = TEST_KEY.sign(seal_signed_bytes(seal)).signature.hex()
    seal["sig_algorithm"] = "ed25519"
    changed["seal"] = seal
    return changed


def test_seals_with_and_without_the_log_fields_verify(ours: dict[str, Any]) -> None:
    public = bytes(TEST_KEY.verify_key).hex()
    assert LOG_FIELDS.keys() <= ours["seal"].keys()
    assert verify_receipt(ours, pubkey_hex=public).key_pinned
    assert verify_receipt(_resealed(ours, *LOG_FIELDS), pubkey_hex=public).key_pinned


@pytest.mark.parametrize(
    ("drop", "fields"),
    [(("rfc6962_root",), {}), (("prev_seal_sha256",), {}), ((), {"extra": "x"})],
)
def test_a_seal_with_any_other_key_set_is_refused(
    ours: dict[str, Any], drop: tuple[str, ...], fields: dict
) -> None:
    with pytest.raises(ReceiptMalformed, match="seal keys"):
        verify_receipt(_resealed(ours, *drop, **fields))


@pytest.mark.parametrize("name", ["key_rotations", "rfc3161_timestamps"])
def test_optional_top_level_lists_pass_the_shape_only_with_content(name: str) -> None:
    receipt = seed_receipt()
    if name == "key_rotations":  # its records are checked by the verifier's rotation step
        receipt[name] = [{"opaque": "checked by ledger/keys/keychain.py"}]
        check_receipt_shape(receipt)
    for empty_or_wrong in ([], "x", {}):
        receipt[name] = empty_or_wrong
        with pytest.raises(ReceiptMalformed, match=name):
            check_receipt_shape(receipt)


def test_bitcoin_anchor_may_carry_an_ots_proof_and_nothing_else() -> None:
    receipt = seed_receipt()
    receipt["bitcoin_anchor"]["ots_proof_base64"] = "AE9wZW5UaW1lc3RhbXBz"
    check_receipt_shape(receipt)
    receipt["bitcoin_anchor"]["other"] = ""
    with pytest.raises(ReceiptMalformed, match="bitcoin_anchor keys"):
        check_receipt_shape(receipt)


def test_any_other_top_level_key_is_refused() -> None:
    receipt = seed_receipt()
    receipt["key_rotation"] = [{"typo": 1}]
    with pytest.raises(ReceiptMalformed, match="receipt keys"):
        check_receipt_shape(receipt)


def test_audit_reads_seals_with_the_log_fields(ours: dict[str, Any]) -> None:
    seal = copy.deepcopy(ours["seal"])
    assert parse_seals([(0, canonical_json(seal))])[0][1] == seal
    del seal["rfc6962_root"]
    with pytest.raises(SealInvalid, match="a seal's fields"):
        parse_seals([(0, canonical_json(seal))])
