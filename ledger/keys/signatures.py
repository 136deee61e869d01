"""The two ed25519 checks a receipt and a ledger share: an envelope's signature and a seal's.

`crovia verify` and `crovia audit` call the same functions, so a receipt and a ledger line pass
the same rule (lowercase hex, the `ed25519:` prefix on envelopes, the key_id of the key).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import nacl.exceptions
import nacl.signing

from ledger.envelope import SIGNATURE_PREFIX, signed_bytes
from ledger.exceptions import KeyIdMismatch, SealSignatureInvalid, SignatureInvalid
from ledger.keys.keyfile import key_id as key_id_of
from ledger.seal import SIG_ALGORITHM, seal_signed_bytes

_HEX128 = re.compile(r"[0-9a-f]{128}")


def check_envelope_signature(
    envelope: Mapping[str, Any], key: nacl.signing.VerifyKey, signed: bytes | None = None
) -> str:
    """The envelope's `ed25519:<128 hex>` signature verifies under `key`; else SignatureInvalid.

    Shared with `crovia audit`, so a receipt and a ledger line pass the same rule. `signed` is
    `signed_bytes(envelope)` when the caller has it already.
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
        message = signed if signed is not None else signed_bytes(envelope)
        key.verify(message, bytes.fromhex(claimed[len(SIGNATURE_PREFIX) :]))
    except nacl.exceptions.BadSignatureError:
        raise SignatureInvalid(
            "envelope signature does not verify under seal.public_key_hex",
            expected="valid ed25519 signature",
            computed=claimed,
        ) from None
    return "envelope_signature"


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
