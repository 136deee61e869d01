"""The shape of the stamp fields of a receipt, checked with the rest of its shape.

A receipt may add `rfc3161_timestamps` at the top level and `ots_proof_base64` to its
`bitcoin_anchor`, each only with content. An anchor without a proof may claim nothing (the seed's
`pending_next_stamp` and our `not_stamped`); an anchor with one is checked against its proof by
`ledger.stamps.check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ledger.exceptions import BitcoinAnchorUnverifiable, ReceiptMalformed

OPTIONAL_RECEIPT_KEYS = frozenset({"rfc3161_timestamps"})
OPTIONAL_ANCHOR_KEYS = frozenset({"ots_proof_base64"})
TOKEN_KEYS = frozenset({"gen_time", "token_base64", "tsa_url"})
UNSTAMPED_STATUSES = frozenset({"pending_next_stamp", "not_stamped"})
PROVEN_STATUSES = frozenset({"pending_next_stamp", "confirmed"})


def check_stamp_shape(receipt: Mapping[str, Any]) -> None:
    """Raise ReceiptMalformed or BitcoinAnchorUnverifiable unless the stamp fields are sound."""
    if "rfc3161_timestamps" in receipt:
        tokens = receipt["rfc3161_timestamps"]
        if not isinstance(tokens, list) or not tokens:
            raise ReceiptMalformed("rfc3161_timestamps is a non-empty list", computed=tokens)
        for number, token in enumerate(tokens):
            if not isinstance(token, dict) or set(token) != TOKEN_KEYS:
                raise ReceiptMalformed(
                    f"rfc3161_timestamps[{number}] keys", expected=sorted(TOKEN_KEYS)
                )
            if not all(isinstance(v, str) for v in token.values()):
                raise ReceiptMalformed(f"rfc3161_timestamps[{number}] values are strings")
    _check_anchor(receipt["bitcoin_anchor"])


def _check_anchor(anchor: Mapping[str, Any]) -> None:
    if "ots_proof_base64" not in anchor:
        claims = anchor["bitcoin_attestations"] or anchor["calendar_attestations"]
        if claims or anchor["status"] not in UNSTAMPED_STATUSES:
            raise BitcoinAnchorUnverifiable(
                "bitcoin_anchor claims an attestation but carries no proof to check it",
                expected=f"no attestations, status in {sorted(UNSTAMPED_STATUSES)}",
                computed=anchor,
            )
        return
    if not isinstance(anchor["ots_proof_base64"], str) or not anchor["ots_proof_base64"]:
        raise ReceiptMalformed("bitcoin_anchor.ots_proof_base64 is a non-empty string")
    for name in ("bitcoin_attestations", "calendar_attestations"):
        if not isinstance(anchor[name], list):
            raise ReceiptMalformed(f"bitcoin_anchor.{name} is a list", computed=anchor[name])
    if anchor["status"] not in PROVEN_STATUSES:
        raise BitcoinAnchorUnverifiable(
            "bitcoin_anchor.status with a proof",
            expected=sorted(PROVEN_STATUSES),
            computed=anchor["status"],
        )
