"""The shape check of a receipt, before any hash or signature: exact keys, types and fixed values.

A receipt that passes has every field the cryptographic checks of ledger/receipt/verify.py read,
with the right JSON type, so those checks can index it freely.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ledger.canonical import check_signable
from ledger.exceptions import CanonicalizationError, ReceiptMalformed
from ledger.receipt.build import CANONICALIZATION, RECEIPT_SCHEMA, SECTION_KEYS
from ledger.seal import SEAL_FIXED_VALUES, SEAL_KEY_SETS, SEED_SEAL_KEYS
from ledger.stamps.shape import OPTIONAL_ANCHOR_KEYS, OPTIONAL_RECEIPT_KEYS, check_stamp_shape

RECEIPT_KEYS = frozenset(SECTION_KEYS) | {"_canonicalization", "axiom_id", "envelope", "schema"}
# Extension keys present only with content (docs/stamps.md); every other key set is exact.
# `key_rotations` (ledger/keys/rotation.py) is checked by the verifier's rotation step.
OPTIONAL_KEYS = {
    "receipt": OPTIONAL_RECEIPT_KEYS | {"key_rotations"},
    "bitcoin_anchor": OPTIONAL_ANCHOR_KEYS,
}
# The seal's one time form: whole seconds, UTC, ASCII digits only (the page reads it the same way).
_SEALED_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", re.ASCII)
_TYPES: dict[tuple[str, str], type] = {
    ("seal", "leaf_count"): int,
    ("seal", "merkle_root"): str,
    ("seal", "public_key_hex"): str,
    ("seal", "key_id"): str,
    ("seal", "signature"): str,
    ("seal", "sig_algorithm"): str,
    ("seal", "sealed_at"): str,
    ("ledger", "leaf_index"): int,
    ("ledger", "leaf_hash"): str,
    ("merkle_proof", "path"): list,
}


def check_receipt_shape(receipt: Any) -> None:
    """Raise ReceiptMalformed (or BitcoinAnchorUnverifiable) unless `receipt` has the v1 shape.

    Stamp extensions (ledger/stamps/shape.py) are allowed; whether they hold is ledger.stamps.check.
    """
    if not isinstance(receipt, Mapping):
        raise ReceiptMalformed("a receipt is a JSON object", computed=type(receipt).__name__)
    _expect_keys("receipt", receipt, RECEIPT_KEYS)
    try:
        check_signable(receipt)
    except CanonicalizationError as exc:
        raise ReceiptMalformed(f"not canonical-encodable: {exc}") from None
    for name, keys in SECTION_KEYS.items():
        if name != "seal":
            _expect_keys(name, receipt[name], keys)
    check_seal_keys("seal", receipt["seal"])
    for name in OPTIONAL_KEYS["receipt"] & receipt.keys():
        if type(receipt[name]) is not list or not receipt[name]:
            raise ReceiptMalformed(f"{name}, when present, is a non-empty list")
    envelope = receipt["envelope"]
    if not isinstance(envelope, dict) or not {"axiom_id", "signature"} <= envelope.keys():
        raise ReceiptMalformed("envelope is an object with axiom_id and signature")
    _expect("schema", RECEIPT_SCHEMA, receipt["schema"])
    _expect("_canonicalization", CANONICALIZATION, receipt["_canonicalization"])
    for name, value in SEAL_FIXED_VALUES.items():
        _expect(f"seal.{name}", value, receipt["seal"][name])
    for (section, name), kind in _TYPES.items():
        value = receipt[section][name]
        if type(value) is not kind:
            raise ReceiptMalformed(
                f"{section}.{name} type", expected=kind.__name__, computed=type(value).__name__
            )
    if not _SEALED_AT.fullmatch(receipt["seal"]["sealed_at"]):
        raise ReceiptMalformed(
            "seal.sealed_at is a UTC time in ASCII digits",
            expected="YYYY-MM-DDTHH:MM:SSZ",
            computed=receipt["seal"]["sealed_at"],
        )
    check_stamp_shape(receipt)  # an attestation claimed without a proof is refused here


def check_seal_keys(name: str, seal: Any) -> None:
    """ReceiptMalformed unless `seal` is an object with one of SEAL_KEY_SETS (ledger/seal.py):
    the reference seal's keys, or those plus exactly the transparency-log fields."""
    if not isinstance(seal, Mapping) or seal.keys() not in SEAL_KEY_SETS:
        computed = sorted(seal) if isinstance(seal, Mapping) else type(seal).__name__
        raise ReceiptMalformed(f"{name} keys", expected=sorted(SEED_SEAL_KEYS), computed=computed)


def _expect_keys(name: str, section: Any, keys: frozenset[str]) -> None:
    """Exactly `keys`, plus any of the extension keys OPTIONAL_KEYS allows in `name`."""
    optional = OPTIONAL_KEYS.get(name, frozenset())
    if not isinstance(section, Mapping) or not keys <= section.keys() <= keys | optional:
        computed = sorted(section) if isinstance(section, Mapping) else type(section).__name__
        raise ReceiptMalformed(f"{name} keys", expected=sorted(keys), computed=computed)


def _expect(what: str, expected: object, computed: object) -> None:
    if expected != computed:
        raise ReceiptMalformed(what, expected=expected, computed=computed)
