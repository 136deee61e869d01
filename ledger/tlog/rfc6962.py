"""The RFC 6962 / RFC 9162 (section 2.1) Merkle tree: hashes, roots, proofs, a compact range.

Proofs are made from a `NodeSource` of COMPLETE nodes (node (level, i) is the root of leaves
[i * 2**level, (i + 1) * 2**level), all present); a complete node is the same in every tree over
the same leaf hashes, so the ledger's stored nodes serve this tree as they serve its own
(docs/ledger.md). Any root, inclusion or consistency proof at any size costs O(log n) node reads.

Verification follows RFC 9162 sections 2.1.3.2 and 2.1.4.2 and raises InclusionProofInvalid or
ConsistencyProofInvalid naming what was expected and what was computed; it never returns a bool.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

from ledger.tlog.exceptions import ConsistencyProofInvalid, InclusionProofInvalid

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()


class NodeSource(Protocol):
    """Complete nodes by (level, index); raises LookupError for a node it does not hold."""

    def node(self, level: int, index: int) -> bytes: ...


def leaf_hash(data: bytes) -> bytes:
    """sha256(0x00 || data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """sha256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_of(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH over `leaf_hashes`, straight from RFC 6962's definition: the O(n) reference."""
    if not leaf_hashes:
        return EMPTY_ROOT
    if len(leaf_hashes) == 1:
        return leaf_hashes[0]
    k = _split(len(leaf_hashes))
    return node_hash(root_of(leaf_hashes[:k]), root_of(leaf_hashes[k:]))


def root_at(size: int, source: NodeSource) -> bytes:
    """The root of the first `size` leaves (EMPTY_ROOT for 0), from O(log size) complete nodes."""
    return _range_root(0, size, source) if size else EMPTY_ROOT


def inclusion_proof(index: int, size: int, source: NodeSource) -> list[bytes]:
    """PATH(index, D[0:size]) of RFC 9162 2.1.3.1, leaf's sibling first.

    Raises ValueError unless 0 <= index < size.
    """
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size} leaves")
    top_down, start, n = [], 0, size
    while n > 1:
        k = _split(n)
        if index - start < k:  # the leaf is left: the right subtree is the sibling
            top_down.append(_range_root(start + k, n - k, source))
            n = k
        else:
            top_down.append(_range_root(start, k, source))
            start, n = start + k, n - k
    return top_down[::-1]


def consistency_proof(old_size: int, new_size: int, source: NodeSource) -> list[bytes]:
    """PROOF(old_size, D[0:new_size]) of RFC 9162 2.1.4.1 (empty when the sizes are equal).

    Raises ValueError unless 0 < old_size <= new_size: a proof from the empty tree means nothing.
    """
    if not 0 < old_size <= new_size:
        raise ValueError(f"no consistency proof from size {old_size} to size {new_size}")
    top_down, start, m, n, whole = [], 0, old_size, new_size, True
    while m != n:
        k = _split(n)
        if m <= k:
            top_down.append(_range_root(start + k, n - k, source))
            n = k
        else:
            top_down.append(_range_root(start, k, source))
            start, m, n, whole = start + k, m - k, n - k, False
    if not whole:  # the old tree's last subtree is not a subtree the verifier knows
        top_down.append(_range_root(start, m, source))
    return top_down[::-1]


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes
) -> None:
    """Check that `proof` leads from `leaf` at `index` to `root` in a tree of `size` leaves.

    Raises InclusionProofInvalid (index out of range, a hash not 32 bytes, a proof too long or too
    short, or another root).
    """
    if not 0 <= index < size:
        raise InclusionProofInvalid(f"leaf {index} is not in a tree of {size} leaves")
    _check_hashes(InclusionProofInvalid, [leaf, *proof])
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise InclusionProofInvalid("the proof is too long", computed=len(proof))
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise InclusionProofInvalid("the proof is too short", computed=len(proof))
    if r != root:
        raise InclusionProofInvalid(
            "the proof leads to another root", expected=_b(root), computed=_b(r)
        )


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Check that the tree of `new_size` leaves with `new_root` extends the one of `old_size`.

    Equal sizes need an empty proof and equal roots; a proof from size 0 or to a smaller size is
    refused. Raises ConsistencyProofInvalid.
    """
    if old_size == 0 or new_size < old_size:
        raise ConsistencyProofInvalid(f"no consistency proof from size {old_size} to {new_size}")
    if old_size == new_size:
        if proof:
            raise ConsistencyProofInvalid("equal sizes need an empty proof", computed=len(proof))
        if old_root != new_root:
            raise ConsistencyProofInvalid(
                f"two roots for size {old_size}", expected=_b(old_root), computed=_b(new_root)
            )
        return
    _check_hashes(ConsistencyProofInvalid, [old_root, new_root, *proof])
    path = [old_root, *proof] if old_size & (old_size - 1) == 0 else list(proof)
    if not path:
        raise ConsistencyProofInvalid("the proof is empty")
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ConsistencyProofInvalid("the proof is too long", computed=len(proof))
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ConsistencyProofInvalid("the proof is too short", computed=len(proof))
    if fr != old_root:
        raise ConsistencyProofInvalid("old root", expected=_b(old_root), computed=_b(fr))
    if sr != new_root:
        raise ConsistencyProofInvalid("new root", expected=_b(new_root), computed=_b(sr))


class CompactRange:
    """The roots of the perfect subtrees that make up leaves [0, size): one per set bit of size.

    Appending is amortised O(1) hashing and returns the complete nodes it finished, so a store can
    keep them; `root()` is O(log size). Memory is O(log size).
    """

    def __init__(self) -> None:
        self.size = 0
        self._peaks: list[bytes] = []  # left to right, largest subtree first

    @classmethod
    def at(cls, size: int, source: NodeSource) -> CompactRange:
        """The compact range of the first `size` leaves, read from O(log size) complete nodes."""
        compact = cls()
        offset = 0
        for level in range(size.bit_length() - 1, -1, -1):
            if size >> level & 1:
                compact._peaks.append(source.node(level, offset >> level))
                offset += 1 << level
        compact.size = size
        return compact

    @property
    def peaks(self) -> tuple[bytes, ...]:
        return tuple(self._peaks)

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add one leaf hash; return the (level, index, hash) complete nodes it finished, itself
        first."""
        finished = [(0, self.size, leaf)]
        level, index, current = 0, self.size, leaf
        while index & 1:
            current = node_hash(self._peaks.pop(), current)
            level, index = level + 1, index >> 1
            finished.append((level, index, current))
        self._peaks.append(current)
        self.size += 1
        return finished

    def root(self) -> bytes:
        """The RFC 6962 root of the leaves appended so far (EMPTY_ROOT when there are none)."""
        if not self._peaks:
            return EMPTY_ROOT
        current = self._peaks[-1]
        for peak in reversed(self._peaks[:-1]):
            current = node_hash(peak, current)
        return current


class MemoryNodes:
    """Every complete node over a list of leaf hashes, in memory: a NodeSource for tests and for
    small trees (a ledger keeps its nodes in files)."""

    def __init__(self, leaf_hashes: Sequence[bytes] = ()) -> None:
        self.compact = CompactRange()
        self._levels: list[list[bytes]] = []
        for leaf in leaf_hashes:
            self.append(leaf)

    @property
    def size(self) -> int:
        return self.compact.size

    def append(self, leaf: bytes) -> None:
        for level, _index, digest in self.compact.append(leaf):
            if level == len(self._levels):
                self._levels.append([])
            self._levels[level].append(digest)

    def node(self, level: int, index: int) -> bytes:
        if level < len(self._levels) and 0 <= index < len(self._levels[level]):
            return self._levels[level][index]
        raise LookupError(f"no complete node {level}/{index} in a tree of {self.size} leaves")


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _range_root(start: int, size: int, source: NodeSource) -> bytes:
    """MTH of leaves [start, start + size), `start` a multiple of a power of two >= size, so each
    piece of size's binary decomposition is a complete node."""
    pieces, offset = [], start
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            pieces.append(source.node(level, offset >> level))
            offset += 1 << level
    current = pieces[-1]
    for piece in reversed(pieces[:-1]):
        current = node_hash(piece, current)
    return current


def _check_hashes(error: type[Exception], hashes: Sequence[bytes]) -> None:
    for digest in hashes:
        if len(digest) != HASH_SIZE:
            raise error(f"a hash of {len(digest)} bytes, not {HASH_SIZE}", expected=HASH_SIZE)


def _b(digest: bytes) -> str:
    return digest.hex()
