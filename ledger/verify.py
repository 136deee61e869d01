"""The offline verifier of receipts (docs/format.md "What a verifier checks").

Each failed check raises its own VerificationError subclass carrying `check`, `expected` and
`computed`; success returns a Verdict. Nothing here reads the ledger: a receipt and, ideally, a
pinned key suffice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import nacl.exceptions
import nacl.signing

from ledger import merkle
from ledger.canonical import canonical_json
from ledger.envelope import ANCHOR_CHAIN, SIGNATURE_PREFIX, axiom_id_of, signed_bytes
from ledger.exceptions import (
    AnchorMismatch,
    AxiomIdMismatch,
    KeyIdMismatch,
    LeafHashMismatch,
    ProofMalformed,
    ReceiptMalformed,
    RootMismatch,
    SealSignatureInvalid,
    SignatureInvalid,
    TrustRootMismatch,
    UntrustedKey,
    VerifierUrlMismatch,
)
from ledger.keychain import KeyChain, receipt_key_chain
from ledger.keys import key_id as key_id_of
from ledger.keys import parse_pin
from ledger.receipt import MERKLE_PROOF_PARAMS
from ledger.receipt_shape import check_receipt_shape
from ledger.seal import SIG_ALGORITHM, seal_signed_bytes
from ledger.stamps.check import StampVerdict, verify_stamps

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")


@dataclass(frozen=True)
class Verdict:
    """A receipt that passed every check. `key_pinned` is False when no trusted key was given."""

    axiom_id: str
    leaf_index: int
    leaf_count: int
    merkle_root: str
    key_id: str
    public_key_hex: str
    key_pinned: bool
    checks: tuple[str, ...]
    stamps: StampVerdict | None = None
    key_rotations: int = 0  # rotation records followed from the ledger's first key to the seal's


def verify_receipt(
    receipt: Mapping[str, Any],
    *,
    pubkey_hex: str | None = None,
    key_id: str | None = None,
    tsa_roots: Sequence[Any] = (),
    bitcoin_headers: Sequence[bytes] = (),
) -> Verdict:
    """Check `receipt` offline: return a Verdict or raise the first failed check's error.

    `pubkey_hex` or `key_id` pins the expected signer (UntrustedKey if it differs); without either
    the receipt is only shown to be self-consistent, and the Verdict says `key_pinned=False`.
    Raises InvalidPublicKey, before any check, for a pin that is not 64 (16) hex characters.
    Stamps the receipt carries are checked too (ledger.stamps.check: Rfc3161Invalid, OtsInvalid),
    their TSAs chained to `tsa_roots` and Bitcoin claims to `bitcoin_headers` when given.
    """
    pubkey_hex, key_id = parse_pin(pubkey_hex, key_id)
    check_receipt_shape(receipt)
    envelope, seal = receipt["envelope"], receipt["seal"]
    verify_key = _seal_key(seal)
    chain = receipt_key_chain(receipt)  # the seal's key alone, or key_rotations up to it
    leaf_key = chain.verify_key_for_leaf(receipt["ledger"]["leaf_index"])
    checks = [
        _check_axiom_id(receipt),
        _check_verifier_url(receipt),
        check_envelope_signature(envelope, leaf_key),
        _check_leaf_hash(receipt),
        _check_path(receipt),
        _check_anchor(receipt),
        check_seal_signature(seal, verify_key),
        _check_trust_root(receipt),
    ]
    if chain.records:
        checks.append("key_rotation")
    pinned = _check_pinned(seal, pubkey_hex, key_id, chain)
    if pinned:
        checks.append("pinned_key")
    stamps = verify_stamps(receipt, tsa_roots=tsa_roots, bitcoin_headers=bitcoin_headers)
    checks += stamps.checks
    return Verdict(
        axiom_id=receipt["axiom_id"],
        leaf_index=receipt["ledger"]["leaf_index"],
        leaf_count=seal["leaf_count"],
        merkle_root=seal["merkle_root"],
        key_id=seal["key_id"],
        public_key_hex=seal["public_key_hex"],
        key_pinned=pinned,
        checks=tuple(checks),
        stamps=stamps,
        key_rotations=len(chain.records),
    )


def _seal_key(seal: Mapping[str, Any]) -> nacl.signing.VerifyKey:
    key_hex = seal["public_key_hex"]
    if not _HEX64.fullmatch(key_hex):
        raise ReceiptMalformed(
            "seal.public_key_hex is not 64 hex", expected="64 hex", computed=key_hex
        )
    return nacl.signing.VerifyKey(bytes.fromhex(key_hex))


def _check_axiom_id(receipt: Mapping[str, Any]) -> str:
    envelope = receipt["envelope"]
    computed = axiom_id_of(envelope)
    for where, claimed in (
        ("envelope.axiom_id", envelope["axiom_id"]),
        ("axiom_id", receipt["axiom_id"]),
    ):
        if claimed != computed:
            raise AxiomIdMismatch(
                f"{where} does not match the envelope", expected=claimed, computed=computed
            )
    return "axiom_id"


def _check_verifier_url(receipt: Mapping[str, Any]) -> str:
    expected = f"/v/{receipt['axiom_id']}"
    if receipt["verifier"]["url"] != expected:
        raise VerifierUrlMismatch(
            "verifier.url", expected=expected, computed=receipt["verifier"]["url"]
        )
    return "verifier_url"


def _check_anchor(receipt: Mapping[str, Any]) -> str:
    """An anchor on this project's chain states the leaf index: it must be the receipt's."""
    anchors = receipt["envelope"].get("anchors")
    first = anchors[0] if isinstance(anchors, list) and anchors else None
    ours = isinstance(first, dict) and first.get("chain") == ANCHOR_CHAIN
    if ours and first.get("height") != receipt["ledger"]["leaf_index"]:
        raise AnchorMismatch(
            "envelope.anchors[0].height is the leaf index",
            expected=receipt["ledger"]["leaf_index"],
            computed=first.get("height"),
        )
    return "anchor"


def check_envelope_signature(envelope: Mapping[str, Any], key: nacl.signing.VerifyKey) -> str:
    """The envelope's `ed25519:<128 hex>` signature verifies under `key`; else SignatureInvalid.

    Shared with `crovia audit`, so a receipt and a ledger line pass the same rule.
    """
    claimed = envelope.get("signature")
    if (
        not isinstance(claimed, str)
        or not claimed.startswith(SIGNATURE_PREFIX)
        or not _HEX128.fullmatch(claimed[len(SIGNATURE_PREFIX) :])
    ):
        raise SignatureInvalid(
            "envelope.signature is not ed25519:<128 hex>",
            expected="ed25519:<hex>",
            computed=claimed,
        )
    try:
        key.verify(signed_bytes(envelope), bytes.fromhex(claimed[len(SIGNATURE_PREFIX) :]))
    except nacl.exceptions.BadSignatureError:
        raise SignatureInvalid(
            "envelope signature does not verify under seal.public_key_hex",
            expected="valid ed25519 signature",
            computed=claimed,
        ) from None
    return "envelope_signature"


def _check_leaf_hash(receipt: Mapping[str, Any]) -> str:
    computed = merkle.leaf_hash(canonical_json(receipt["envelope"])).hex()
    claimed = receipt["ledger"].get("leaf_hash")
    if claimed != computed:
        raise LeafHashMismatch("ledger.leaf_hash", expected=claimed, computed=computed)
    return "leaf_hash"


def _check_path(receipt: Mapping[str, Any]) -> str:
    proof, seal = receipt["merkle_proof"], receipt["seal"]
    index, count = receipt["ledger"]["leaf_index"], seal["leaf_count"]
    params = {k: proof.get(k) for k in MERKLE_PROOF_PARAMS}
    if params != MERKLE_PROOF_PARAMS:
        raise ProofMalformed(
            "merkle_proof parameters", expected=MERKLE_PROOF_PARAMS, computed=params
        )
    if not 0 <= index < count:
        raise ProofMalformed("leaf_index < leaf_count", expected=f"< {count}", computed=index)
    steps = _path_steps(proof.get("path"), index, merkle.tree_height(count))
    leaf = bytes.fromhex(receipt["ledger"]["leaf_hash"])
    computed = merkle.root_from_path(leaf, index, steps).hex()
    if computed != seal["merkle_root"]:
        raise RootMismatch(
            "path does not lead to seal.merkle_root",
            expected=seal["merkle_root"],
            computed=computed,
        )
    return "merkle_path"


def _path_steps(path: object, index: int, height: int) -> list[tuple[bytes, str]]:
    if not isinstance(path, list) or len(path) != height:
        computed = len(path) if isinstance(path, list) else type(path).__name__
        raise ProofMalformed(
            "path length = ceil(log2 leaf_count)", expected=height, computed=computed
        )
    steps = []
    for level, step in enumerate(path):
        side = merkle.LEFT if (index >> level) & 1 else merkle.RIGHT
        if not isinstance(step, dict) or set(step) != {"sibling", "side"}:
            raise ProofMalformed(f"path[{level}] shape", expected="{sibling, side}", computed=step)
        if step["side"] != side:
            raise ProofMalformed(
                f"path[{level}].side = bit {level} of leaf_index",
                expected=side,
                computed=step["side"],
            )
        if not isinstance(step["sibling"], str) or not _HEX64.fullmatch(step["sibling"]):
            raise ProofMalformed(
                f"path[{level}].sibling is 64 hex", expected="64 hex", computed=step["sibling"]
            )
        steps.append((bytes.fromhex(step["sibling"]), side))
    return steps


def check_seal_signature(seal: Mapping[str, Any], key: nacl.signing.VerifyKey) -> str:
    """The seal's algorithm, hex signature and key_id hold under `key`; else SealSignatureInvalid
    or KeyIdMismatch. Shared with `crovia audit`.
    """
    if seal["sig_algorithm"] != SIG_ALGORITHM or not _HEX128.fullmatch(seal["signature"]):
        raise SealSignatureInvalid(
            "seal signature is not ed25519 hex",
            expected=SIG_ALGORITHM,
            computed=seal["sig_algorithm"],
        )
    try:
        key.verify(seal_signed_bytes(dict(seal)), bytes.fromhex(seal["signature"]))
    except nacl.exceptions.BadSignatureError:
        raise SealSignatureInvalid(
            "seal signature does not verify under seal.public_key_hex",
            expected="valid ed25519 signature",
            computed=seal["signature"],
        ) from None
    computed = key_id_of(bytes(key))
    if seal["key_id"] != computed:
        raise KeyIdMismatch("seal.key_id", expected=seal["key_id"], computed=computed)
    return "seal_signature"


def _check_trust_root(receipt: Mapping[str, Any]) -> str:
    trust, seal = receipt["trust_root"], receipt["seal"]
    for name, seal_name in (
        ("public_key_hex", "public_key_hex"),
        ("key_id", "key_id"),
        ("signature_algorithm", "sig_algorithm"),
    ):
        if trust.get(name) != seal[seal_name]:
            raise TrustRootMismatch(
                f"trust_root.{name} names another key than the seal's",
                expected=seal[seal_name],
                computed=trust.get(name),
            )
    return "trust_root"


def _check_pinned(
    seal: Mapping[str, Any], pubkey_hex: str | None, key_id: str | None, chain: KeyChain
) -> bool:
    """The pin names the seal's key, or a key the receipt's rotations chain to it."""
    if pubkey_hex is not None and pubkey_hex not in chain.keys:
        raise UntrustedKey(
            "the receipt is signed by another key than the pinned one",
            expected=pubkey_hex,
            computed=seal["public_key_hex"],
        )
    if key_id is not None and key_id not in chain.key_ids():
        raise UntrustedKey(
            "the receipt is signed by another key than the pinned key_id",
            expected=key_id,
            computed=seal["key_id"],
        )
    return pubkey_hex is not None or key_id is not None
