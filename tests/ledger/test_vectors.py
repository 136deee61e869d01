"""Golden vectors: the seed receipt verifies byte for byte; every systematic mutation of it, and of
receipts from our own ledgers, fails with the named check (tests/vectors/make_vectors.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ledger.canonical import canonical_json
from ledger.exceptions import InvalidPublicKey, UntrustedKey, VerificationError
from ledger.receipt import verify_receipt
from ledger.seal import SEAL_EXTENSION_KEYS
from tests.vectors import make_vectors
from tests.vectors.make_vectors import TEST_KEY, build_ledger, mutations, seed_receipt

SEED_BYTES = make_vectors.SEED_RECEIPT.read_bytes()
SEED_KEY = "cf742e26f75669dc673cb5c0786a1ae23ae8ca19c347317192ce40c28a7ff25c"


@pytest.fixture(scope="module")
def our_receipts(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[dict[str, Any]]]:
    root = tmp_path_factory.mktemp("vectors")
    return {size: build_ledger(root / str(size), size) for size in make_vectors.LEDGER_SIZES}


def test_the_seed_verifies_byte_for_byte() -> None:
    receipt = json.loads(SEED_BYTES)
    assert canonical_json(receipt) == SEED_BYTES
    verdict = verify_receipt(receipt)
    assert not verdict.key_pinned
    assert verdict.leaf_index == 233395 and verdict.leaf_count == 234491
    assert verify_receipt(receipt, pubkey_hex=SEED_KEY).key_pinned
    assert verify_receipt(receipt, key_id="430895f101d38164").key_pinned


def test_a_wrong_pin_is_untrusted() -> None:
    with pytest.raises(UntrustedKey) as caught:
        verify_receipt(seed_receipt(), pubkey_hex="00" * 32)
    assert caught.value.expected == "00" * 32 and caught.value.computed == SEED_KEY
    with pytest.raises(UntrustedKey):
        verify_receipt(seed_receipt(), key_id="0000000000000000")


@pytest.mark.parametrize(("pubkey_hex", "key_id"), [("zz", None), (None, "4308"), ("", None)])
def test_a_malformed_pin_is_refused_before_any_check(pubkey_hex, key_id) -> None:
    with pytest.raises(InvalidPublicKey):
        verify_receipt({"not": "a receipt"}, pubkey_hex=pubkey_hex, key_id=key_id)


def test_every_receipt_of_our_ledgers_verifies_pinned(our_receipts: dict) -> None:
    public = bytes(TEST_KEY.verify_key).hex()
    for size, receipts in our_receipts.items():
        assert len(receipts) == size
        for receipt in receipts:
            assert canonical_json(receipt) == canonical_json(json.loads(canonical_json(receipt)))
            verdict = verify_receipt(receipt, pubkey_hex=public)
            assert verdict.leaf_count == size and verdict.key_pinned


def test_our_receipts_have_exactly_the_seed_shape(our_receipts: dict) -> None:
    seed = seed_receipt()
    ours = our_receipts[13][5]
    shape = _shape(ours)
    added = {name: shape["seal"].pop(name, None) for name in SEAL_EXTENSION_KEYS}
    assert shape == _shape(seed)
    assert added == dict.fromkeys(SEAL_EXTENSION_KEYS, "str")  # new seals: exactly the extension
    assert ours["bitcoin_anchor"]["status"] == "not_stamped"  # nothing stamps it: no "pending"
    assert ours["envelope"]["anchors"][0]["height"] == ours["ledger"]["leaf_index"] == 5


def _bases(our_receipts: dict) -> dict[str, dict[str, Any]]:
    return {
        "seed": seed_receipt(),
        "ours 13/5": our_receipts[13][5],
        "ours 13/12": our_receipts[13][12],  # on the right edge, duplicated at two levels
        "ours 1/0": our_receipts[1][0],  # a one-leaf tree: an empty path
    }


@pytest.mark.parametrize("base", ["seed", "ours 13/5", "ours 13/12", "ours 1/0"])
def test_every_mutation_fails_with_its_named_check(our_receipts: dict, base: str) -> None:
    wrong = []
    count = 0
    for mutation in mutations(_bases(our_receipts)[base]):
        count += 1
        try:
            verify_receipt(mutation.receipt)
            got = None
        except VerificationError as exc:
            got = exc.check
            assert exc.expected is not None or exc.computed is not None or got == "receipt_shape"
        if got != mutation.check:
            wrong.append((mutation.name, mutation.check, got))
    assert not wrong, wrong[:10]
    assert count > 1024  # both signatures' 512 bits each, at least


def test_the_mutation_set_covers_every_signed_field_of_the_seed() -> None:
    checks = {m.check for m in mutations(seed_receipt())}
    assert checks >= {
        "receipt_shape",
        "axiom_id",
        "verifier_url",
        "envelope_signature",
        "leaf_hash",
        "merkle_path",
        "merkle_root",
        "seal_signature",
        "trust_root",
        "bitcoin_anchor",
    }


def test_the_generator_writes_vectors(tmp_path: Path) -> None:
    make_vectors.main(str(tmp_path))
    lines = (tmp_path / "mutations.jsonl").read_bytes().splitlines()
    assert len(lines) > 4000
    first = json.loads(lines[0])
    assert set(first) == {"base", "name", "check", "receipt"}
    assert (tmp_path / "receipt_17_16.json").exists()


def _shape(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items() if k != "spider_record"}
    if isinstance(node, list):
        return [_shape(node[0])] if node else []
    return type(node).__name__
