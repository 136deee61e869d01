"""The oracle against the reference receipt and systematic mutations of it.

The seed must pass byte for byte; every change to a signed, hashed, proven or fixed field must
fail with the check that names it. Receipts re-signed under a fresh key (over trees of every small
shape) show the oracle accepts what is consistent and that only a pinned key ties it to a signer.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nacl.signing import SigningKey

from tests.independent.oracle import OracleReject, canonical_json, check_receipt, load_receipt

RAW = Path(__file__).with_name("seed_axiom_proof.json").read_bytes()
SEED: dict[str, Any] = json.loads(RAW)
SEED_KEY: str = SEED["seal"]["public_key_hex"]

# The check each field's mutation must trip, by longest path prefix; None marks the fields that
# nothing signs or derives, which the oracle documents as unchecked.
EXPECTED: dict[tuple[str, ...], str | None] = {
    ("_canonicalization",): "canonicalization",
    ("axiom_id",): "axiom_id",
    ("bitcoin_anchor",): "bitcoin_anchor",
    ("envelope",): "axiom_id",
    ("envelope", "anchors"): "envelope_signature",
    ("envelope", "signature"): "envelope_signature",
    ("ledger", "leaf_hash"): "leaf_hash",
    ("ledger", "leaf_index"): "path_shape",
    ("ledger", "ledger_path"): None,
    ("merkle_proof",): "proof_params",
    ("merkle_proof", "path"): "merkle_root",
    ("schema",): "shape",
    ("seal",): "seal_signature",
    ("seal", "merkle_root"): "merkle_root",
    ("seal", "public_key_hex"): "envelope_signature",  # the seal's key also signs the envelope
    ("trust_root",): "trust_root",
    ("trust_root", "url"): None,
    ("verifier", "spec"): None,
    ("verifier", "url"): "verifier_url",
}


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a scalar or an empty container in `value`."""
    if isinstance(value, dict | list) and value:
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            yield from _leaves(child, (*path, key))
    else:
        yield path


def _changed(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("0" if value[-1:] != "0" else "1")
    return ["x"]  # an empty list


def _expected(path: tuple[Any, ...]) -> str | None:
    if path[-1] == "side":
        return "path_shape"
    prefix = max((p for p in EXPECTED if path[: len(p)] == p), key=len)
    return EXPECTED[prefix]


def _mutant(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    receipt = copy.deepcopy(SEED)
    parent = receipt
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return receipt


def _rejects(receipt: dict[str, Any], check: str, pubkey_hex: str | None = SEED_KEY) -> None:
    with pytest.raises(OracleReject) as caught:
        check_receipt(receipt, pubkey_hex)
    assert caught.value.check == check, caught.value


def test_seed_bytes_are_canonical_and_accepted_pinned_or_not() -> None:
    receipt = load_receipt(RAW)
    check_receipt(receipt)
    check_receipt(receipt, SEED_KEY)
    check_receipt(receipt, SEED_KEY.upper())  # the pin is user input: either case names the key


@pytest.mark.parametrize(
    "raw",
    [
        RAW + b"\n\n",
        RAW + b" \n",
        RAW + b"\r",
        json.dumps(SEED, sort_keys=True).encode(),
        json.dumps(dict(reversed(SEED.items())), separators=(",", ":")).encode(),
        RAW.replace(b'"chain":"crovia.', b'"chain":"crovia\\u002e'),
        RAW[:-1],
    ],
    ids=[
        "two-newlines",
        "space-newline",
        "lone-cr",
        "spaces",
        "key-order",
        "escaped-char",
        "truncated",
    ],
)
def test_non_canonical_bytes_are_rejected(raw: bytes) -> None:
    with pytest.raises(OracleReject) as caught:
        load_receipt(raw)
    assert caught.value.check == "canonical_bytes"


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_one_final_newline_is_read_past(end: bytes) -> None:
    assert load_receipt(RAW + end) == load_receipt(RAW)  # as an editor saves it (docs/format.md)


@pytest.mark.parametrize("path", list(_leaves(SEED)), ids=lambda p: ".".join(map(str, p)))
def test_every_field_changed(path: tuple[Any, ...]) -> None:
    parent = SEED
    for key in path:
        parent = parent[key]
    mutant, check = _mutant(path, _changed(parent)), _expected(path)
    if check is None:
        check_receipt(mutant, SEED_KEY)
    else:
        _rejects(mutant, check)


@pytest.mark.parametrize("section", sorted(SEED))
def test_missing_or_extra_keys_are_rejected(section: str) -> None:
    _rejects({k: v for k, v in SEED.items() if k != section}, "shape")
    _rejects({**SEED, "extra": 1}, "shape")
    if not isinstance(SEED[section], dict):
        return
    # An extra envelope key is signed data, and _canonicalization is checked as one fixed value.
    check = {"envelope": "axiom_id", "_canonicalization": "canonicalization"}.get(section, "shape")
    _rejects(_mutant((section, "extra"), 1), check)
    required = ("signature", "axiom_id") if section == "envelope" else SEED[section]
    for key in required:
        fewer = {k: v for k, v in SEED[section].items() if k != key}
        _rejects(_mutant((section,), fewer), "shape" if check == "axiom_id" else check)


def test_floats_are_rejected_even_in_canonical_bytes() -> None:
    raw = RAW.replace(b'"height":0', b'"height":0.0')
    _rejects(load_receipt(raw), "shape")


@pytest.mark.parametrize("where", ["envelope", "seal"])
def test_every_signature_bit_flipped(where: str) -> None:
    prefix = "ed25519:" if where == "envelope" else ""
    signature = bytes.fromhex(SEED[where]["signature"].removeprefix(prefix))
    for bit in range(8 * len(signature)):
        flipped = bytearray(signature)
        flipped[bit // 8] ^= 1 << bit % 8
        _rejects(_mutant((where, "signature"), prefix + flipped.hex()), f"{where}_signature")


def test_hex_must_be_lowercase() -> None:
    """Hex has one spelling: an uppercase copy of a valid signature is not that signature."""
    _rejects(_mutant(("seal", "signature"), SEED["seal"]["signature"].upper()), "seal_signature")
    envelope_signature = SEED["envelope"]["signature"].replace("ed25519:", "")
    upper = "ed25519:" + envelope_signature.upper()
    _rejects(_mutant(("envelope", "signature"), upper), "envelope_signature")


def test_path_sides_swapped_at_every_level() -> None:
    for level, step in enumerate(SEED["merkle_proof"]["path"]):
        swapped = {
            "sibling": step["sibling"],
            "side": {"left": "right", "right": "left"}[step["side"]],
        }
        _rejects(_mutant(("merkle_proof", "path", level), swapped), "path_shape")


@pytest.mark.parametrize(
    "edit",
    [lambda p: p[:-1], lambda p: p[1:], lambda p: [*p, p[-1]], lambda p: [p[0], *p], lambda p: []],
    ids=["drop-top", "drop-bottom", "repeat-top", "repeat-bottom", "empty"],
)
def test_path_of_wrong_length(edit: Any) -> None:
    _rejects(_mutant(("merkle_proof", "path"), edit(SEED["merkle_proof"]["path"])), "path_shape")


@pytest.mark.parametrize("index", [234491, 234492, 2**18, -1, "233395", True, None])
def test_leaf_index_outside_the_tree(index: Any) -> None:
    _rejects(_mutant(("ledger", "leaf_index"), index), "path_shape")


def test_wrong_pinned_key() -> None:
    stranger = SigningKey.generate().verify_key.encode().hex()
    for pin in (stranger, SEED["seal"]["key_id"], ""):
        _rejects(SEED, "pinned_key", pin)


def _tree(leaves: list[bytes], index: int) -> tuple[bytes, list[dict[str, str]]]:
    """Root and path of `leaves[index]`, built level by level (not by walking a path)."""
    path, level = [], leaves
    while len(level) > 1:
        level = level + level[-1:] if len(level) % 2 else level
        side = "left" if index % 2 else "right"
        path.append({"sibling": level[index ^ 1].hex(), "side": side})
        pairs = zip(level[::2], level[1::2], strict=True)
        level = [hashlib.sha256(b"\x01" + left + right).digest() for left, right in pairs]
        index //= 2
    return level[0], path


def _sign_seal(receipt: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    seal = receipt["seal"]
    signed = {k: v for k, v in seal.items() if k not in ("signature", "sig_algorithm")}
    seal["signature"] = key.sign(canonical_json(signed)).signature.hex()
    return receipt


def _forge(key: SigningKey, count: int, index: int) -> dict[str, Any]:
    """The seed's envelope re-signed by `key` as leaf `index` of `count`, under a seal by `key`."""
    receipt, public = copy.deepcopy(SEED), key.verify_key.encode()
    envelope = receipt["envelope"]
    signed = {k: v for k, v in envelope.items() if k not in ("signature", "axiom_id")}
    envelope["signature"] = "ed25519:" + key.sign(canonical_json(signed)).signature.hex()
    leaf = hashlib.sha256(b"\x00" + canonical_json(envelope)).digest()
    leaves = [hashlib.sha256(b"other %d" % n).digest() for n in range(count)]
    leaves[index] = leaf
    root, receipt["merkle_proof"]["path"] = _tree(leaves, index)
    receipt["ledger"].update(leaf_hash=leaf.hex(), leaf_index=index)
    trust = {"key_id": hashlib.sha256(public).hexdigest()[:16], "public_key_hex": public.hex()}
    receipt["seal"].update(trust, leaf_count=count, merkle_root=root.hex())
    receipt["trust_root"].update(trust)
    return _sign_seal(receipt, key)


@pytest.mark.parametrize("count", [*range(1, 18), 31, 32, 33, 100])
def test_forged_trees_of_every_shape_verify_only_under_their_own_key(count: int) -> None:
    key = SigningKey.generate()
    for index in range(count):
        forged = _forge(key, count, index)
        check_receipt(forged, key.verify_key.encode().hex())
        _rejects(forged, "pinned_key")


def test_duplicated_last_leaf_is_not_an_extra_leaf() -> None:
    """Bitcoin CVE-2012-2459: in a 3-leaf tree, leaf 2 doubles as a phantom leaf 3."""
    forged = _forge(SigningKey.generate(), 3, 2)
    forged["ledger"]["leaf_index"] = 3
    forged["merkle_proof"]["path"][0]["side"] = "left"  # sides now match index 3 exactly
    _rejects(forged, "path_shape", None)


def test_key_id_must_name_the_signing_key() -> None:
    key = SigningKey.generate()
    forged = _forge(key, 5, 4)
    forged["seal"]["key_id"] = forged["trust_root"]["key_id"] = SEED["seal"]["key_id"]
    _rejects(_sign_seal(forged, key), "key_id", None)


def test_self_consistent_forgery_passes_only_unpinned(caplog: pytest.LogCaptureFixture) -> None:
    forged = _forge(SigningKey.generate(), 9, 7)
    check_receipt(forged)
    assert "no key pinned" in caplog.text
    _rejects(forged, "pinned_key")
