"""The stored-node Merkle code against a naive rehash of every level, for every size and leaf."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger import merkle
from ledger.store import FileNodeStore, MemoryFrontier

MAX_LEAVES = 3000
LEAVES = [hashlib.sha256(b"leaf %d" % n).digest() for n in range(MAX_LEAVES)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> FileNodeStore:
    """Complete nodes of 3000 leaves on disk: every smaller tree is a prefix of them."""
    nodes = FileNodeStore(tmp_path_factory.mktemp("tree"), writable=True)
    for index, leaf in enumerate(LEAVES):
        merkle.append_leaf(nodes, index, leaf)
    nodes.flush()
    yield nodes
    nodes.close()


@settings(max_examples=40, deadline=None)
@given(size=st.integers(min_value=1, max_value=MAX_LEAVES))
def test_every_path_of_every_size_verifies_against_the_naive_root(
    store: FileNodeStore, size: int
) -> None:
    expected = merkle.naive_root(LEAVES[:size])
    assert merkle.root(size, store) == expected
    for index in range(size):
        path = merkle.inclusion_path(index, size, store)
        assert len(path) == merkle.tree_height(size)
        assert [side == merkle.LEFT for _, side in path] == [
            bool(index >> level & 1) for level in range(len(path))
        ]
        assert merkle.root_from_path(LEAVES[index], index, path) == expected


@pytest.mark.parametrize("size", [*range(1, 70), 127, 128, 129, 1023, 1024, 1025, MAX_LEAVES])
def test_small_and_boundary_sizes(store: FileNodeStore, size: int) -> None:
    expected = merkle.naive_root(LEAVES[:size])
    for index in {0, size // 2, size - 1}:
        path = merkle.inclusion_path(index, size, store)
        assert merkle.root_from_path(LEAVES[index], index, path) == expected


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_changed_byte_breaks_the_proof(store: FileNodeStore, data: st.DataObject) -> None:
    size = data.draw(st.integers(min_value=2, max_value=MAX_LEAVES))
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    path = merkle.inclusion_path(index, size, store)
    root = merkle.naive_root(LEAVES[:size])
    target = data.draw(st.integers(min_value=-1, max_value=len(path) - 1))  # -1: the leaf
    byte = data.draw(st.integers(min_value=0, max_value=31))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    leaf = LEAVES[index]
    if target < 0:
        leaf = _flip(leaf, byte, flip)
    else:
        sibling, side = path[target]
        path[target] = (_flip(sibling, byte, flip), side)
    assert merkle.root_from_path(leaf, index, path) != root


def test_the_in_memory_frontier_gives_the_same_roots() -> None:
    from ledger.tlog import rfc6962

    frontier = MemoryFrontier()
    for index, leaf in enumerate(LEAVES[:600]):
        merkle.append_leaf(frontier, index, leaf)
        assert merkle.root(index + 1, frontier) == merkle.naive_root(LEAVES[: index + 1])
        assert rfc6962.root_at(index + 1, frontier) == rfc6962.root_of(LEAVES[: index + 1])
    # Only the last two complete nodes of a level are kept.
    assert frontier.node(0, 599) == LEAVES[599] and frontier.node(0, 598) == LEAVES[598]
    for level, index in ((0, 597), (0, 600), (1, 297), (1, -1), (12, 0)):
        with pytest.raises(LookupError):
            frontier.node(level, index)


def test_node_files_hold_only_complete_nodes(store: FileNodeStore, tmp_path: Path) -> None:
    assert store.count(0) == MAX_LEAVES
    for level in range(1, merkle.tree_height(MAX_LEAVES) + 1):
        assert store.count(level) == MAX_LEAVES >> level


def test_tree_height_is_ceil_log2() -> None:
    assert [merkle.tree_height(n) for n in (1, 2, 3, 4, 5, 234491)] == [0, 1, 2, 2, 3, 18]
    with pytest.raises(ValueError):
        merkle.tree_height(0)


def _flip(digest: bytes, byte: int, mask: int) -> bytes:
    changed = bytearray(digest)
    changed[byte] ^= mask
    return bytes(changed)


@pytest.mark.parametrize("size", [*range(1, 70), 127, 128, 129, 1023, 1025])
def test_duplicated_levels_are_where_a_genuine_path_pairs_the_node_with_itself(
    store: FileNodeStore, size: int
) -> None:
    """duplicated_levels names exactly the levels at which the stored tree's own path gives the
    node itself as its sibling (duplicate_last), for every leaf: what the verifiers require."""
    for index in range(size):
        path = merkle.inclusion_path(index, size, store)
        current, own = LEAVES[index], []
        for level, (sibling, side) in enumerate(path):
            if sibling == current:
                own.append(level)
            pair = (sibling, current) if side == merkle.LEFT else (current, sibling)
            current = merkle.node_hash(*pair)
        assert merkle.duplicated_levels(index, size) == own, (index, size)
