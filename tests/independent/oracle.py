"""An independent verifier of `crovia.axiom_proof.v1` receipts, written from docs/format.md alone.

A test oracle: it shares no code with `ledger/`, so a misreading of the format there cannot hide
in both. `OracleReject.check` names the failed check: shape, canonicalization, proof_params,
bitcoin_anchor, axiom_id, envelope_signature, leaf_hash, path_shape, merkle_root, seal_signature,
key_id, trust_root, verifier_url, pinned_key (and canonical_bytes, from `load_receipt`).
Nothing signs or derives `ledger.ledger_path`, `trust_root.url` or `verifier.spec`: unchecked.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

log = logging.getLogger(__name__)

HEX_DIGITS = frozenset("0123456789abcdef")
# Exact key sets; the envelope has none here because its signature covers whatever it holds.
SECTION_KEYS = {
    "ledger": {"leaf_hash", "leaf_index", "ledger_path"},
    "merkle_proof": {"hash_alg", "leaf_prefix", "node_prefix", "odd_leaf_rule", "path"},
    "trust_root": {"key_id", "public_key_hex", "signature_algorithm", "url"},
    "verifier": {"spec", "url"},
    "bitcoin_anchor": {"bitcoin_attestations", "calendar_attestations", "ots_url", "stamped_at"}
    | {"status"},
    "seal": {"first_collector_run_id", "first_receipt_hash", "jsonl_path", "key_id"}
    | {"last_collector_run_id", "last_receipt_hash", "leaf_count", "merkle_root"}
    | {"public_key_hex", "run_id", "schema", "seal_family_version", "seal_kind"}
    | {"sealed_at", "sig_algorithm", "signature", "signer_version"},
}
# New seals add exactly these signed keys (docs/format.md, "This project"); the seed has none.
SEAL_EXTENSION = {"prev_seal_sha256", "rfc6962_root"}
RECEIPT_KEYS = set(SECTION_KEYS) | {"_canonicalization", "axiom_id", "envelope", "schema"}
CANONICALIZATION = {
    "envelope_id": "axm_ + sha256(envelope minus {signature, axiom_id, anchors})",
    "envelope_signature": "ed25519(envelope minus {signature, axiom_id})",
    "json": "sort_keys=True, separators=(',',':'), ensure_ascii=False, allow_nan=False, utf-8",
    "leaf_hash": "sha256(0x00 || canonical_json(envelope_full))",
    "seal_signature": "ed25519(seal minus {signature, sig_algorithm})",
}
PROOF_PARAMS = {
    "hash_alg": "sha256",
    "leaf_prefix": "0x00",
    "node_prefix": "0x01",
    "odd_leaf_rule": "duplicate_last",
}
# OpenTimestamps anchoring is a later step: until this oracle can check an attestation, the only
# anchors it accepts are those that claim nothing: the seed's "pending_next_stamp" and crovia's own
# "not_stamped" (nothing will stamp it), each with every attestation field empty.
UNANCHORED = {
    "bitcoin_attestations": [],
    "calendar_attestations": [],
    "ots_url": "",
    "stamped_at": "",
}
UNANCHORED_STATUSES = ("pending_next_stamp", "not_stamped")


class OracleReject(Exception):
    """A receipt failed `check`; `detail` says what was expected and what was found."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"{check}: {detail}")
        self.check = check
        self.detail = detail


def canonical_json(value: Any) -> bytes:
    """docs/format.md's canonical JSON; raises ValueError on NaN or infinity."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")


def load_receipt(raw: bytes) -> dict[str, Any]:
    """Parse receipt bytes; raises OracleReject("canonical_bytes") unless they are canonical."""
    try:
        receipt = json.loads(raw)
        canonical = canonical_json(receipt)
    except ValueError as exc:  # also covers JSONDecodeError and UnicodeDecodeError
        raise OracleReject("canonical_bytes", f"not canonical-encodable JSON: {exc}") from exc
    # docs/format.md: exactly one final "\n" or "\r\n" after the canonical bytes is read past
    body = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1] if raw.endswith(b"\n") else raw
    if not isinstance(receipt, dict) or canonical != body:
        raise OracleReject("canonical_bytes", "the bytes differ from canonical_json(parsed bytes)")
    return receipt


def check_receipt(receipt: dict[str, Any], pubkey_hex: str | None = None) -> None:
    """Run every check of docs/format.md; raises OracleReject on the first failure.

    `pubkey_hex` pins the signer; without it the receipt is only shown self-consistent (logged).
    """
    _check_shape(receipt)
    envelope, ledger, seal = receipt["envelope"], receipt["ledger"], receipt["seal"]
    public_key = _hex(seal["public_key_hex"], 32, "seal_signature", "seal.public_key_hex")
    _check_axiom_id(receipt["axiom_id"], envelope)
    _check_envelope_signature(envelope, public_key)
    leaf = hashlib.sha256(b"\x00" + canonical_json(envelope)).digest()
    _expect("leaf_hash", "ledger.leaf_hash", ledger["leaf_hash"], leaf.hex())
    root = _root_from_path(ledger["leaf_index"], receipt["merkle_proof"]["path"], leaf, seal)
    _expect("merkle_root", "seal.merkle_root", seal["merkle_root"], root.hex())
    _check_seal(seal, public_key)
    _check_trust(receipt, public_key, pubkey_hex)


def _check_shape(receipt: dict[str, Any]) -> None:
    """Exact key sets, fixed values, and no floats anywhere (signed structures carry none)."""
    if not isinstance(receipt, dict) or set(receipt) != RECEIPT_KEYS:
        raise OracleReject("shape", f"top-level keys are not {sorted(RECEIPT_KEYS)}")
    for name, keys in SECTION_KEYS.items():
        extended = keys | SEAL_EXTENSION if name == "seal" else keys
        if not isinstance(receipt[name], dict) or set(receipt[name]) not in (keys, extended):
            raise OracleReject("shape", f"{name} keys are not {sorted(keys)}")
    envelope = receipt["envelope"]
    if not isinstance(envelope, dict) or not {"signature", "axiom_id"} <= set(envelope):
        raise OracleReject("shape", "envelope is not an object with signature and axiom_id")
    _reject_floats(receipt, "receipt")
    _expect("shape", "schema", receipt["schema"], "crovia.axiom_proof.v1")
    _expect("canonicalization", "_canonicalization", receipt["_canonicalization"], CANONICALIZATION)
    proof_params = {k: v for k, v in receipt["merkle_proof"].items() if k != "path"}
    _expect("proof_params", "merkle_proof", proof_params, PROOF_PARAMS)
    anchor = dict(receipt["bitcoin_anchor"])
    if anchor.pop("status", None) not in UNANCHORED_STATUSES:
        raise OracleReject("bitcoin_anchor", f"status is not one of {UNANCHORED_STATUSES}")
    _expect("bitcoin_anchor", "bitcoin_anchor", anchor, UNANCHORED)


def _reject_floats(value: Any, where: str) -> None:
    if isinstance(value, float):
        raise OracleReject("shape", f"{where} is a float ({value!r})")
    if isinstance(value, dict | list):
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            _reject_floats(child, f"{where}.{key}")


def _check_axiom_id(top_level_id: Any, envelope: dict[str, Any]) -> None:
    hashed = {k: v for k, v in envelope.items() if k not in ("signature", "axiom_id", "anchors")}
    computed = "axm_" + hashlib.sha256(canonical_json(hashed)).hexdigest()
    _expect("axiom_id", "envelope.axiom_id", envelope["axiom_id"], computed)
    _expect("axiom_id", "axiom_id", top_level_id, computed)


def _check_envelope_signature(envelope: dict[str, Any], public_key: bytes) -> None:
    claimed = envelope["signature"]
    if not isinstance(claimed, str) or not claimed.startswith("ed25519:"):
        raise OracleReject("envelope_signature", f"{claimed!r} lacks the 'ed25519:' prefix")
    signature = _hex(claimed[len("ed25519:") :], 64, "envelope_signature", "envelope.signature")
    signed = {k: v for k, v in envelope.items() if k not in ("signature", "axiom_id")}
    _verify("envelope_signature", public_key, canonical_json(signed), signature)


def _root_from_path(index: Any, path: Any, leaf: bytes, seal: dict[str, Any]) -> bytes:
    """Walk the path up from `leaf`; its shape must be the only one a tree of leaf_count allows."""
    count = seal["leaf_count"]
    ints = all(isinstance(n, int) and not isinstance(n, bool) for n in (index, count))
    if not (ints and 0 <= index < count):
        raise OracleReject("path_shape", f"need 0 <= leaf_index {index!r} < leaf_count {count!r}")
    depth = (count - 1).bit_length()  # ceil(log2 count): duplicate_last keeps every leaf this deep
    if not isinstance(path, list) or len(path) != depth:
        raise OracleReject("path_shape", f"path must have {depth} steps for {count} leaves")
    node = leaf
    for level, step in enumerate(path):
        side = "left" if index >> level & 1 else "right"
        if not isinstance(step, dict) or set(step) != {"sibling", "side"} or step["side"] != side:
            raise OracleReject("path_shape", f"step {level} is {step!r}, its side must be {side!r}")
        sibling = _hex(step["sibling"], 32, "path_shape", f"path[{level}].sibling")
        pair = sibling + node if side == "left" else node + sibling
        node = hashlib.sha256(b"\x01" + pair).digest()
    return node


def _check_seal(seal: dict[str, Any], public_key: bytes) -> None:
    _expect("seal_signature", "seal.schema", seal["schema"], "crovia.seal.v1")
    _expect("seal_signature", "seal.sig_algorithm", seal["sig_algorithm"], "ed25519")
    signature = _hex(seal["signature"], 64, "seal_signature", "seal.signature")
    signed = {k: v for k, v in seal.items() if k not in ("signature", "sig_algorithm")}
    _verify("seal_signature", public_key, canonical_json(signed), signature)
    _expect("key_id", "seal.key_id", seal["key_id"], hashlib.sha256(public_key).hexdigest()[:16])


def _check_trust(receipt: dict[str, Any], public_key: bytes, pubkey_hex: str | None) -> None:
    """trust_root must agree with the seal; only a pinned key proves who signed."""
    seal, trust = receipt["seal"], receipt["trust_root"]
    declared = {k: trust[k] for k in ("key_id", "public_key_hex", "signature_algorithm")}
    expected = {"key_id": seal["key_id"], "public_key_hex": public_key.hex()}
    _expect("trust_root", "trust_root", declared, expected | {"signature_algorithm": "ed25519"})
    _expect("verifier_url", "verifier.url", receipt["verifier"]["url"], f"/v/{receipt['axiom_id']}")
    if pubkey_hex is None:
        log.warning("no key pinned: %s is consistent, its signer unchecked", receipt["axiom_id"])
    elif pubkey_hex.lower() != public_key.hex():
        raise OracleReject("pinned_key", f"pinned {pubkey_hex}, signed by {public_key.hex()}")


def _expect(check: str, where: str, found: Any, expected: Any) -> None:
    if found != expected:
        raise OracleReject(check, f"{where}: expected {expected!r}, found {found!r}")


def _hex(value: Any, nbytes: int, check: str, where: str) -> bytes:
    """Decode lowercase hex of exactly `nbytes` bytes: one value, one spelling."""
    if not isinstance(value, str) or len(value) != 2 * nbytes or not set(value) <= HEX_DIGITS:
        raise OracleReject(check, f"{where} is {value!r}, not {nbytes} bytes of lowercase hex")
    return bytes.fromhex(value)


def _verify(check: str, public_key: bytes, message: bytes, signature: bytes) -> None:
    try:
        VerifyKey(public_key).verify(message, signature)
    except BadSignatureError as exc:
        raise OracleReject(check, f"ed25519 signature {signature.hex()} does not verify") from exc
