"""The duplicate_last Merkle tree of docs/format.md: hashing, roots and inclusion paths.

Only COMPLETE nodes (the root of 2**k consecutive leaves, all present) are ever stored: they never
change as the ledger grows. Nodes on the right edge of a tree of n leaves are incomplete; they are
recomputed from at most one stored node per level, so a root or a path for any n costs O(log n)
reads and hashes. Level k of a tree with n leaves holds ceil(n / 2**k) nodes, of which n >> k are
complete.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
LEFT, RIGHT = "left", "right"


class NodeSource(Protocol):
    """Where complete nodes are read from and appended to (files, or the last few in memory)."""

    def node(self, level: int, index: int) -> bytes: ...

    def append(self, level: int, digest: bytes) -> None: ...


def leaf_hash(line: bytes) -> bytes:
    """sha256(0x00 || canonical envelope bytes)."""
    return hashlib.sha256(LEAF_PREFIX + line).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """sha256(0x01 || left || right)."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def tree_height(leaf_count: int) -> int:
    """ceil(log2(leaf_count)): the number of steps in every path of a tree of that size (0 for 1
    leaf).
    """
    if leaf_count < 1:
        raise ValueError("a Merkle tree needs at least one leaf")
    return (leaf_count - 1).bit_length()


def append_leaf(source: NodeSource, leaf_index: int, digest: bytes) -> None:
    """Store leaf `leaf_index` (= the current leaf count) and every complete node it finishes.

    Amortised O(1): a parent is formed each time an odd-indexed node arrives.
    """
    source.append(0, digest)
    level, index, current = 0, leaf_index, digest
    while index & 1:
        current = node_hash(source.node(level, index - 1), current)
        level, index = level + 1, index >> 1
        source.append(level, current)


def right_edge(leaf_count: int, source: NodeSource) -> list[bytes]:
    """The last node of every level of the tree of `leaf_count` leaves, from the last leaf to the
    root.
    """
    edge = [source.node(0, leaf_count - 1)]
    last = leaf_count - 1  # index of the last node at the current level
    for level in range(1, tree_height(leaf_count) + 1):
        parent = last >> 1
        if last & 1:  # the edge node is a right child; its left sibling is complete
            edge.append(node_hash(source.node(level - 1, last - 1), edge[-1]))
        else:  # the edge node has no sibling at this size: duplicate_last
            edge.append(node_hash(edge[-1], edge[-1]))
        last = parent
    return edge


def root(leaf_count: int, source: NodeSource) -> bytes:
    """The Merkle root over leaves 0..leaf_count-1."""
    return right_edge(leaf_count, source)[-1]


def inclusion_path(leaf_index: int, leaf_count: int, source: NodeSource) -> list[tuple[bytes, str]]:
    """The path from leaf `leaf_index` to the root of the tree of `leaf_count` leaves.

    Each step is (sibling, side); side is the SIBLING's position, so it equals the index bit.
    """
    if not 0 <= leaf_index < leaf_count:
        raise ValueError(f"leaf {leaf_index} is not in a tree of {leaf_count} leaves")
    edge = right_edge(leaf_count, source)
    path = []
    index, last = leaf_index, leaf_count - 1
    for level in range(tree_height(leaf_count)):
        sibling = index ^ 1
        # at or past the edge: the edge node (past it, duplicate_last pairs the node with itself)
        digest = edge[level] if sibling >= last else source.node(level, sibling)
        path.append((digest, LEFT if index & 1 else RIGHT))
        index, last = index >> 1, last >> 1
    return path


def duplicated_levels(leaf_index: int, leaf_count: int) -> list[int]:
    """The levels at which the path of leaf `leaf_index` in the tree of `leaf_count` leaves passes
    through the last node of a level of odd node count: there duplicate_last pairs the node with
    itself, so the path's sibling is the node itself (docs/format.md). The node at level k is
    `leaf_index >> k`, the level's last `(leaf_count - 1) >> k`; it is unpaired when it is that
    last one and its index is even."""
    levels = []
    index, last = leaf_index, leaf_count - 1
    for level in range(tree_height(leaf_count)):
        if index == last and not index & 1:
            levels.append(level)
        index, last = index >> 1, last >> 1
    return levels


def root_from_path(leaf: bytes, leaf_index: int, path: Sequence[tuple[bytes, str]]) -> bytes:
    """Fold `path` over `leaf` (no shape checks: the verifier does those first)."""
    current = leaf
    for sibling, side in path:
        current = node_hash(sibling, current) if side == LEFT else node_hash(current, sibling)
    return current


def naive_root(leaves: Sequence[bytes]) -> bytes:
    """The root by rehashing every level: the reference the stored-node code is tested against."""
    level = list(leaves)
    if not level:
        raise ValueError("a Merkle tree needs at least one leaf")
    while len(level) > 1:
        if len(level) % 2:
            level.append(level[-1])
        level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]
