"""Signing a batch of unsigned envelopes into ledger lines, on two threads when it pays.

PyNaCl releases the GIL while it signs, so a helper thread can sign part of a large batch while
the caller's thread signs the rest. The two take small chunks from one queue rather than a fixed
half each, so the caller never waits long for a starved helper. Whether it pays depends on the
machine at that moment: with the second core free, two threads sign a batch in about 0.8 of the
time of one; with other processes keeping it busy, the two fight over the GIL on one core and
take longer than one alone. `_Pace` keeps both figures fresh and picks the faster way.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, wait
from typing import Any

import nacl.signing

from ledger import merkle
from ledger.canonical import check_signable, encode_checked
from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, sign_envelope
from ledger.exceptions import EnvelopeMalformed, InvalidRecord
from ledger.records.shape import check_envelope_shape

# Batches at least this long are shared with the helper thread; below it a hand-off costs more.
PARALLEL_MIN = 32
# Envelopes per chunk: about half a millisecond of signing, so the caller waits at most that long
# for the helper's last chunk.
CHUNK = 12
# Every this many large batches, sign one the way that was slower lately, to notice a change.
PROBE_EVERY = 4

Signed = tuple[dict[str, Any], bytes, bytes]


class BatchSigner:
    """Signs batches with one key, sharing large ones with a thread of `pool` (the caller's)."""

    def __init__(self, key: nacl.signing.SigningKey, pool: Executor) -> None:
        self._key = key
        self._pool = pool
        self._pace = _Pace()

    def sign(self, envelopes: Sequence[Mapping[str, Any]], start: int) -> list[Signed]:
        """(full envelope, line with newline, leaf hash) per envelope, leaf indexes from `start`.

        The same bytes whichever way a batch is signed. Raises CanonicalizationError for an
        envelope that cannot be signed.
        """
        if len(envelopes) < PARALLEL_MIN:
            return sign_range(envelopes, start, self._key)
        shared = self._pace.choose_shared()
        started = time.perf_counter()
        if shared:
            signed = self._sign_shared(envelopes, start)
        else:
            signed = sign_range(envelopes, start, self._key)
        self._pace.record(shared, (time.perf_counter() - started) / len(envelopes))
        return signed

    def _sign_shared(self, envelopes: Sequence[Mapping[str, Any]], start: int) -> list[Signed]:
        chunks: queue.SimpleQueue[int] = queue.SimpleQueue()
        for offset in range(0, len(envelopes), CHUNK):
            chunks.put(offset)
        signed: dict[int, list[Signed]] = {}
        helper = self._pool.submit(self._sign_chunks, chunks, envelopes, start, signed)
        try:
            self._sign_chunks(chunks, envelopes, start, signed)
        except BaseException:
            _drain(chunks)  # stop the helper after its current chunk: the batch has failed
            raise
        finally:
            wait([helper])  # nothing of a batch may outlive the call
        helper.result()
        return [item for offset in sorted(signed) for item in signed[offset]]

    def _sign_chunks(
        self,
        chunks: queue.SimpleQueue[int],
        envelopes: Sequence[Mapping[str, Any]],
        start: int,
        signed: dict[int, list[Signed]],
    ) -> None:
        """Sign chunks taken from `chunks` until it is empty, into `signed` by offset."""
        while True:
            try:
                offset = chunks.get_nowait()
            except queue.Empty:
                return
            part = envelopes[offset : offset + CHUNK]
            signed[offset] = sign_range(part, start + offset, self._key)


class _Pace:
    """Recent seconds per envelope of large batches signed alone and shared; picks the faster.

    The first large batch is shared, the second signed alone; after that the faster way, except
    every PROBE_EVERY-th batch, signed the other way so that a stale figure is renewed.
    """

    def __init__(self) -> None:
        self._seconds: dict[bool, float | None] = {False: None, True: None}
        self._batches = 0

    def choose_shared(self) -> bool:
        self._batches += 1
        alone, shared = self._seconds[False], self._seconds[True]
        if alone is None or shared is None:
            return shared is None
        return (shared < alone) != (self._batches % PROBE_EVERY == 0)

    def record(self, shared: bool, seconds_per_envelope: float) -> None:
        previous = self._seconds[shared]
        if previous is not None:  # half the weight to the past: a busy spell fades in two batches
            seconds_per_envelope = (previous + seconds_per_envelope) / 2
        self._seconds[shared] = seconds_per_envelope


def _drain(chunks: queue.SimpleQueue[int]) -> None:
    while True:
        try:
            chunks.get_nowait()
        except queue.Empty:
            return


def sign_range(
    envelopes: Sequence[Mapping[str, Any]], start: int, key: nacl.signing.SigningKey
) -> list[tuple[dict[str, Any], bytes, bytes]]:
    """(full envelope, its line with newline, its leaf hash) for each envelope.

    Raises CanonicalizationError for an unsignable value, InvalidRecord for an object that is not
    an AX.OBS envelope (`crovia audit` would refuse its line).
    """
    signed = []
    for leaf_index, envelope in enumerate(envelopes, start):
        check_signable(envelope)
        anchors = [{"chain": ANCHOR_CHAIN, "height": leaf_index, **ANCHOR_SEE_RECEIPT}]
        full = sign_envelope(envelope, anchors, key)
        try:
            check_envelope_shape(full)
        except EnvelopeMalformed as exc:
            raise InvalidRecord(f"not an AX.OBS envelope: {exc.args[0]}") from None
        line = encode_checked(full)
        signed.append((full, line + b"\n", merkle.leaf_hash(line)))
    return signed
