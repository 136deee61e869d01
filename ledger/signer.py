"""Signing a batch of unsigned envelopes into ledger lines, on two threads when it pays.

PyNaCl releases the GIL while it signs, so a second thread signs half of a large batch while the
caller's thread signs the other half.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, wait
from typing import Any

import nacl.signing

from ledger import merkle
from ledger.canonical import check_signable, encode_checked
from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, sign_envelope

# Batches at least this long are split over two threads; below it a thread hand-off costs more.
PARALLEL_MIN = 32

Signed = tuple[dict[str, Any], bytes, bytes]


class BatchSigner:
    """Signs batches with one key, lending half of a large batch to `pool` (owned by the caller)."""

    def __init__(self, key: nacl.signing.SigningKey, pool: Executor) -> None:
        self._key = key
        self._pool = pool

    def sign(self, envelopes: Sequence[Mapping[str, Any]], start: int) -> list[Signed]:
        """(full envelope, line with newline, leaf hash) per envelope, leaf indexes from `start`.

        Raises CanonicalizationError for an envelope that cannot be signed.
        """
        if len(envelopes) < PARALLEL_MIN:
            return sign_range(envelopes, start, self._key)
        half = len(envelopes) // 2
        second = self._pool.submit(sign_range, envelopes[half:], start + half, self._key)
        try:
            first = sign_range(envelopes[:half], start, self._key)
        finally:
            wait([second])  # it only signs, but nothing of a failed batch may outlive the call
        return first + second.result()


def sign_range(
    envelopes: Sequence[Mapping[str, Any]], start: int, key: nacl.signing.SigningKey
) -> list[tuple[dict[str, Any], bytes, bytes]]:
    """(full envelope, its line with newline, its leaf hash) for each envelope."""
    signed = []
    for leaf_index, envelope in enumerate(envelopes, start):
        check_signable(envelope)
        anchors = [{"chain": ANCHOR_CHAIN, "height": leaf_index, **ANCHOR_SEE_RECEIPT}]
        full = sign_envelope(envelope, anchors, key)
        line = encode_checked(full)
        signed.append((full, line + b"\n", merkle.leaf_hash(line)))
    return signed
