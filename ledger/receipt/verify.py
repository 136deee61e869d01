"""The offline verifier of receipts (docs/format.md "What a verifier checks").

Each failed check raises its own VerificationError subclass carrying `check`, `expected` and
`computed`; success returns a Verdict saying what the receipt vouches for. Nothing here reads the
ledger: a receipt's bytes and, ideally, a pinned key suffice. docs/ledger.md lists the checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import nacl.signing

from ledger import merkle
from ledger.canonical import canonical_json
from ledger.envelope import axiom_id_of
from ledger.exceptions import (
    AxiomIdMismatch,
    InvalidPublicKey,
    LeafHashMismatch,
    ReceiptMalformed,
    TrustRootMismatch,
    UntrustedKey,
    VerifierUrlMismatch,
)
from ledger.keys.keychain import KeyChain, receipt_key_chain
from ledger.keys.keyfile import parse_pin
from ledger.keys.signatures import check_envelope_signature, check_seal_signature
from ledger.keys.trust import (
    TrustRoot,
    TrustRootInvalid,
    check_agreement,
    decide_trust,
    known_chain,
)
from ledger.receipt.path_check import check_path
from ledger.receipt.receipt_bytes import parse_receipt_bytes
from ledger.receipt.shape import check_receipt_shape
from ledger.records.capture import describe_capture, is_capture_record
from ledger.records.coverage import describe_coverage, is_coverage_record
from ledger.records.fetch import describe_fetch, is_fetch_record
from ledger.records.shape import check_envelope_shape, check_receipt_anchor
from ledger.stamps.check import StampVerdict, verify_stamps

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Verdict:
    """A receipt that passed every check, and what it vouches for: this item (vendor, title, url)
    was observed at `observed_at`, signed at `issued_at` as leaf `leaf_index` of a ledger sealed
    at `sealed_at` over `leaf_count` leaves by `key_id`. `key_pinned` is False when no trusted
    key was given: then it shows only that the receipt is self-consistent.
    """

    axiom_id: str
    vendor: str
    title: str
    url: str
    observed_at: str
    issued_at: str
    leaf_index: int
    leaf_count: int
    sealed_at: str
    merkle_root: str
    key_id: str
    public_key_hex: str
    key_pinned: bool
    checks: tuple[str, ...]
    stamps: StampVerdict | None = None
    key_rotations: int = 0  # rotation records followed from the ledger's first key to the seal's
    # "valid": the key is trusted; "unpinned": every check passed but no key was pinned (a pin
    # the key does not match raises UntrustedKey instead). docs/format.md, "one verdict".
    verdict: str = "valid"
    previous_key: dict[str, str] | None = None  # the seal's key handed over to a later one
    # For an AX.FETCH receipt, what the fetch record vouches for (ledger/records/fetch.py), and
    # `title` is "": "feed F fetched at T: HTTP 200, body H, 37 entries". "" for an AX.OBS one.
    fetch: str = ""
    # Who served the feed, when not its vendor (`body.relay` of an item or a fetch record); "" when
    # the vendor did, or the receipt does not say (older receipts, the seed).
    relay: str = ""


def verify_receipt_bytes(
    data: bytes,
    *,
    pubkey_hex: str | None = None,
    key_id: str | None = None,
    tsa_roots: Sequence[Any] = (),
    bitcoin_headers: Sequence[bytes] = (),
    trust_root: TrustRoot | None = None,
    known_rotations: Sequence[Any] = (),
) -> Verdict:
    """Check a receipt file's exact bytes: `verify_receipt` of what they parse to, if they are
    exactly its canonical JSON (ledger/receipt/receipt_bytes.py; else ReceiptBytesInvalid).

    Raises InvalidPublicKey for a malformed pin before looking at `data`.
    """
    parse_pin(pubkey_hex, key_id)
    return verify_receipt(
        parse_receipt_bytes(data),
        pubkey_hex=pubkey_hex,
        key_id=key_id,
        tsa_roots=tsa_roots,
        bitcoin_headers=bitcoin_headers,
        trust_root=trust_root,
        known_rotations=known_rotations,
    )


def verify_receipt(
    receipt: Mapping[str, Any],
    *,
    pubkey_hex: str | None = None,
    key_id: str | None = None,
    tsa_roots: Sequence[Any] = (),
    bitcoin_headers: Sequence[bytes] = (),
    trust_root: TrustRoot | None = None,
    known_rotations: Sequence[Any] = (),
) -> Verdict:
    """Check a parsed `receipt` offline: return a Verdict or raise the first failed check's error.

    `pubkey_hex` or `key_id` pins the expected signer, `trust_root` pins its key, its rotation
    chain and its TSA roots, `known_rotations` are more rotation records (a published
    rotations.json). UntrustedKey (check `pinned_key`, verdict unpinned) when the seal's key is
    not trusted under the pin (ledger/keys/trust.py); without any pin the receipt is only shown to
    be self-consistent, and the Verdict says `verdict="unpinned"`, `key_pinned=False`.
    Raises InvalidPublicKey, before any check, for a pin that is not 64 (16) hex characters.
    A file's bytes go through `verify_receipt_bytes`, which also holds them to the canonical form.
    Stamps the receipt carries are checked too (ledger.stamps.check: Rfc3161Invalid, OtsInvalid),
    their TSAs chained to `tsa_roots` and Bitcoin claims to `bitcoin_headers` when given.
    """
    pubkey_hex, key_id = parse_pin(pubkey_hex, key_id)
    known_records, ends_at = list(known_rotations), None
    if trust_root is not None:
        if pubkey_hex is not None or key_id is not None:
            raise InvalidPublicKey("pin with a trust root or with a key, not both")
        pubkey_hex, ends_at = trust_root.public_key_hex, trust_root.public_key_hex
        known_records = list(trust_root.key_rotations) + known_records
        tsa_roots = [*tsa_roots, *trust_root_certificates(trust_root)]
    check_receipt_shape(receipt)
    envelope, seal = receipt["envelope"], receipt["seal"]
    verify_key = _seal_key(seal)
    chain = receipt_key_chain(receipt)  # the seal's key alone, or key_rotations up to it
    leaf_key = chain.verify_key_for_leaf(receipt["ledger"]["leaf_index"])
    checks = [
        _check_axiom_id(receipt),
        _check_verifier_url(receipt),
        check_envelope_signature(envelope, leaf_key),
        _check_envelope_shape(envelope),
        _check_leaf_hash(receipt),
        check_path(receipt),
        *_check_anchor(receipt),
        check_seal_signature(seal, verify_key),
        _check_trust_root(receipt),
    ]
    if chain.records:
        checks.append("key_rotation")
    stamps = verify_stamps(receipt, tsa_roots=tsa_roots, bitcoin_headers=bitcoin_headers)
    checks += stamps.checks
    # Last: the known chain, then the pin, so "unpinned" means every other check passed. A trust
    # root's own chain ends at its key; newer published records may go on from there.
    if trust_root is not None:
        known_chain(list(trust_root.key_rotations), ends_at, "trust root key_rotations")
    known = _dedup_chain(known_records, "known rotation")
    check_agreement(chain, known)
    if known is not None:  # a key of the known chain is trusted only inside its era
        known.check_seal_era(seal, "known rotation chain")
    if known is not None and "key_rotation" not in checks:
        checks.append("key_rotation")
    trust = decide_trust(
        seal["public_key_hex"],
        pubkey_hex=pubkey_hex,
        key_id_pin=key_id,
        receipt_chain=chain,
        known=known,
    )
    if trust.pinned and not trust.trusted:
        raise UntrustedKey(
            "the receipt is signed by a key that is neither the pinned one nor one a signed"
            " rotation chain leads to it from. If the pinned key took over from it in a key"
            " rotation, give the signed chain: --rotations FILE (the site's rotations.json) or"
            " --trust-root FILE (its trust_root.json)",
            expected=pubkey_hex if pubkey_hex is not None else key_id,
            computed=seal["public_key_hex"] if pubkey_hex is not None else seal["key_id"],
        )
    if trust.pinned:
        checks.append("pinned_key")
    verdict = _verdict(receipt, trust.pinned, tuple(checks), stamps, len(chain.records))
    return replace(
        verdict, verdict="valid" if trust.pinned else "unpinned", previous_key=trust.previous
    )


def _dedup_chain(records: list[Any], where: str) -> KeyChain | None:
    """The known chain; the same records given twice (a trust root and its site's
    rotations.json) count once."""
    seen, unique = set(), []
    for record in records:
        marker = repr(sorted(record.items())) if isinstance(record, Mapping) else repr(record)
        if marker not in seen:
            seen.add(marker)
            unique.append(record)
    return known_chain(unique, None, where)


def trust_root_certificates(trust_root: TrustRoot) -> list[Any]:
    """The TSA root certificates a trust root names (cryptography is imported only then)."""
    if not trust_root.tsa_roots:
        return []
    from cryptography import x509

    certificates = []
    for pem in trust_root.tsa_roots:
        try:
            certificates += x509.load_pem_x509_certificates(pem.encode("ascii"))
        except ValueError as exc:
            raise TrustRootInvalid(f"trust root: tsa_roots: not a certificate: {exc}") from None
    return certificates


def _verdict(
    receipt: Mapping[str, Any],
    pinned: bool,
    checks: tuple[str, ...],
    stamps: StampVerdict,
    rotations: int,
) -> Verdict:
    envelope, seal = receipt["envelope"], receipt["seal"]
    fetch = describe_fetch(envelope) if is_fetch_record(envelope) else ""
    if is_capture_record(envelope):  # a capture of a page: what it found, as a fetch record
        fetch = describe_capture(envelope)
    if is_coverage_record(envelope):  # arXiv's coverage of a category and day: what it states
        fetch = describe_coverage(envelope)
    return Verdict(
        axiom_id=receipt["axiom_id"],
        vendor=envelope["body"]["vendor"],
        title="" if fetch else envelope["body"]["title"],
        url=envelope["object"]["primary_source_url"],
        observed_at=envelope["subject"]["observed_at"],
        issued_at=envelope["issued_at"],
        leaf_index=receipt["ledger"]["leaf_index"],
        leaf_count=seal["leaf_count"],
        sealed_at=seal["sealed_at"],
        merkle_root=seal["merkle_root"],
        key_id=seal["key_id"],
        public_key_hex=seal["public_key_hex"],
        key_pinned=pinned,
        checks=checks,
        stamps=stamps,
        key_rotations=rotations,
        fetch=fetch,
        relay=envelope["body"].get("relay", ""),
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


def _check_envelope_shape(envelope: Mapping[str, Any]) -> str:
    """After the signature: a signed object of another shape is the signer's mistake, or a seal
    passed off as an envelope (ledger/records/shape.py)."""
    check_envelope_shape(envelope)
    return "envelope_shape"


def _check_anchor(receipt: Mapping[str, Any]) -> list[str]:
    """This ledger's anchor states the leaf index; the reference system's placeholder does not."""
    checked = check_receipt_anchor(receipt["envelope"], receipt["ledger"]["leaf_index"])
    return ["anchor"] if checked else []


def _check_leaf_hash(receipt: Mapping[str, Any]) -> str:
    computed = merkle.leaf_hash(canonical_json(receipt["envelope"])).hex()
    claimed = receipt["ledger"].get("leaf_hash")
    if claimed != computed:
        raise LeafHashMismatch("ledger.leaf_hash", expected=claimed, computed=computed)
    return "leaf_hash"


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


def receipt_verdict(data: bytes, **pins: Any) -> tuple[str, str | None]:
    """(verdict, first failed check) of a receipt file's bytes, as `crovia verify` (without
    `--any-key`) and the page decide it: ("valid", None), ("unpinned", "pinned_key") or
    ("invalid", check). `pins` are verify_receipt_bytes's keyword arguments. For the
    differential tests against the page (docs/format.md, "This project: one verdict")."""
    from ledger.exceptions import VerificationError

    try:
        verdict = verify_receipt_bytes(data, **pins)
    except VerificationError as exc:
        return ("unpinned" if exc.check == "pinned_key" else "invalid"), exc.check
    if verdict.verdict == "unpinned":
        return "unpinned", "pinned_key"
    return "valid", None
