"""Nodes and roots read back from tiles, and grown over them, against a naive RFC 6962 tree."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger import merkle
from ledger.exceptions import TileMalformed
from ledger.tlog import tiles
from ledger.tlog.rfc6962 import root_at as rfc6962_root
from ledger.tlog.tile_tree import GrownTree, TileHashes


def leaf(n: int) -> bytes:
    return merkle.leaf_hash(b"entry %d" % n)


def naive_mth(hashes: list[bytes]) -> bytes:
    """RFC 6962 section 2.1, by the letter: split at the largest power of two below n."""
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    split = 1 << ((len(hashes) - 1).bit_length() - 1)
    return merkle.node_hash(naive_mth(hashes[:split]), naive_mth(hashes[split:]))


def tile_bytes(size: int) -> dict[str, bytes]:
    """Every tile of a tree of `size` leaves, by path, built naively from the leaves."""
    leaves = [leaf(n) for n in range(size)]
    published = {}
    for tile in tiles.tiles_for_size(size):
        span = 1 << (8 * tile.level)
        hashes = [
            naive_mth(leaves[(tile.start + i) * span : (tile.start + i + 1) * span])
            for i in range(tile.width)
        ]
        published[tile.path] = tiles.encode_hashes(hashes)
    return published


def reader(size: int, published: dict[str, bytes], seen: list[str] | None = None) -> TileHashes:
    def read(tile: tiles.Tile) -> bytes:
        if seen is not None:
            seen.append(tile.path)
        return published[tile.path]

    return TileHashes(size, read)


SIZES = [1, 2, 3, 255, 256, 257, 511, 512, 1000, 65_535, 65_536, 65_537, 70_000]


@pytest.mark.parametrize("size", SIZES)
def test_roots_from_tiles_equal_the_naive_root(size: int) -> None:
    leaves = [leaf(n) for n in range(size)]
    assert rfc6962_root(size, reader(size, tile_bytes(size))) == naive_mth(leaves)


def test_the_empty_tree() -> None:
    assert rfc6962_root(0, reader(0, {})).hex().startswith("e3b0c442")


def test_a_tile_is_fetched_once_and_a_short_one_is_refused() -> None:
    published, seen = tile_bytes(70_000), []
    hashes = reader(70_000, published, seen)
    rfc6962_root(70_000, hashes)
    rfc6962_root(70_000, hashes)
    assert len(seen) == len(set(seen))
    assert "tile/0/000" not in seen  # the old part is read from the highest tiles
    published["tile/2/000.p/1"] = published["tile/2/000.p/1"][:-1]
    with pytest.raises(TileMalformed, match=r"tile/2/000\.p/1"):
        rfc6962_root(70_000, reader(70_000, published))


def test_incomplete_nodes_are_not_served() -> None:
    hashes = reader(300, tile_bytes(300))
    with pytest.raises(LookupError, match="no complete node"):
        hashes.node(9, 0)
    assert hashes.node(8, 0) == naive_mth([leaf(n) for n in range(256)])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3000), st.integers(0, 3000))
def test_a_tree_grown_from_tiles_and_new_leaves_has_the_naive_roots(a: int, b: int) -> None:
    old, new = min(a, b), max(a, b)
    start = old // 256 * 256
    below = reader(new, tile_bytes(new))
    grown = GrownTree(start, [leaf(n) for n in range(start, new)], below)
    leaves = [leaf(n) for n in range(new)]
    for size in {old, new, (old + new) // 2}:
        if size >= start:
            assert rfc6962_root(size, grown) == naive_mth(leaves[:size])
            if size:
                assert merkle.root(size, grown) == merkle.naive_root(leaves[:size])


def test_a_grown_tree_straddling_a_high_node() -> None:
    start, size = 65_280, 66_000  # the level-16 node 0 covers leaves before and after start
    below = reader(size, tile_bytes(size))
    grown = GrownTree(start, [leaf(n) for n in range(start, size)], below)
    assert grown.node(16, 0) == below.node(16, 0)
    assert rfc6962_root(size, grown) == rfc6962_root(size, below)
    with pytest.raises(ValueError, match="tile boundary"):
        GrownTree(5, [], below)
