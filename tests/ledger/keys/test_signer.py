"""Batch signing: one thread or two, the same lines, ids and leaf hashes as signing one by one."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import nacl.signing

from ledger.canonical import canonical_json_stdlib
from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, axiom_id_of, sign_envelope
from ledger.keys import PARALLEL_MIN, BatchSigner
from ledger.merkle import leaf_hash
from tests.vectors.make_vectors import sample_envelope


def test_shared_and_alone_sign_the_same_bytes(key: nacl.signing.SigningKey) -> None:
    batch = [sample_envelope(n) for n in range(PARALLEL_MIN + 45)]
    expected = []
    for leaf_index, envelope in enumerate(batch, 7):
        anchors = [{"chain": ANCHOR_CHAIN, "height": leaf_index, **ANCHOR_SEE_RECEIPT}]
        line = canonical_json_stdlib(sign_envelope(envelope, anchors, key))
        expected.append((line + b"\n", leaf_hash(line)))
    expected_ids = [axiom_id_of(envelope) for envelope in batch]
    with ThreadPoolExecutor(max_workers=1) as pool:
        signer = BatchSigner(key, pool)
        # the first large batch is shared with the pool's thread, the second signed alone, and
        # later ones whichever way was faster: every one must give the same bytes
        for _ in range(4):
            signed = signer.sign(batch, 7)
            assert [(line, digest) for _full, line, digest in signed] == expected
            assert [full["axiom_id"] for full, _line, _digest in signed] == expected_ids
