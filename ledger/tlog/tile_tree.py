"""Complete Merkle nodes read back from hash tiles, and a tree grown over them from new leaves.

Both are node sources in the sense of ledger/tlog/rfc6962.py and ledger/merkle.py: `node(level,
index)` gives COMPLETE nodes (the root of 2**level leaves from index << level), which are the same
in the receipts' duplicate_last tree and in RFC 6962's, so both trees' roots and proofs can be
computed from them. Pure: the tiles come from a callable. Spec: ../shared/spec/c2sp/tlog-tiles.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ledger.tlog.rfc6962 import node_hash
from ledger.tlog.tiles import TILE_HEIGHT, TILE_WIDTH, Tile, decode_hashes, tile_for


class TileHashes:
    """The complete nodes of the tree of `size` leaves, from its tiles (fetched once each)."""

    def __init__(self, size: int, read_tile: Callable[[Tile], bytes]) -> None:
        self.size = size
        self._read = read_tile
        self._tiles: dict[Tile, list[bytes]] = {}

    def node(self, level: int, index: int) -> bytes:
        """Complete node `index` at `level`. LookupError when the tree has no such complete node;
        TileMalformed (from the tile decoder) for a tile of the wrong length."""
        if level < 0 or index < 0 or (index + 1) << level > self.size:
            raise LookupError(f"no complete node {level}/{index} in a tree of {self.size}")
        tile_level, height = divmod(level, TILE_HEIGHT)
        first = index << height
        hashes = self.tile_hashes(tile_for(tile_level, first // TILE_WIDTH, self.size))
        offset = first % TILE_WIDTH
        return fold(hashes[offset : offset + (1 << height)])

    def read(self, tile: Tile) -> bytes:
        """The bytes of `tile` read afresh (not kept)."""
        return self._read(tile)

    def tile_hashes(self, tile: Tile) -> list[bytes]:
        """The hashes of `tile` (read and length-checked once)."""
        if tile not in self._tiles:
            self._tiles[tile] = decode_hashes(self._read(tile), tile)
        return self._tiles[tile]


class GrownTree:
    """The tree of `size` leaves whose leaves from `start` on are `leaves` (hashes computed here),
    and whose complete nodes before `start` come from `below`.

    `start` must be a multiple of 256, so that no node below tile height straddles it; nodes
    above that height that do are hashed from their halves. O(size - start) memory.
    """

    def __init__(self, start: int, leaves: Sequence[bytes], below: TileHashes) -> None:
        if start % TILE_WIDTH:
            raise ValueError(f"the grown part starts on a tile boundary, not at {start}")
        self.start, self.size = start, start + len(leaves)
        self._below = below
        self._levels: list[list[bytes]] = [list(leaves)]

    def node(self, level: int, index: int) -> bytes:
        """Complete node `index` at `level`; LookupError when the tree has no such node."""
        low, high = index << level, (index + 1) << level
        if level < 0 or index < 0 or high > self.size:
            raise LookupError(f"no complete node {level}/{index} in a tree of {self.size}")
        if high <= self.start:
            return self._below.node(level, index)
        if low < self.start:  # straddles the start: only above tile height
            return node_hash(self.node(level - 1, 2 * index), self.node(level - 1, 2 * index + 1))
        first = -(-self.start >> level)  # index of the first node at `level` at or after start
        return self._level(level)[index - first]

    def _level(self, level: int) -> list[bytes]:
        while len(self._levels) <= level:
            below = len(self._levels) - 1
            nodes, first = self._levels[below], -(-self.start >> below)
            parent_first = -(-self.start >> (below + 1))
            skip = 2 * parent_first - first  # a child left of start has no parent here
            self._levels.append(
                [node_hash(nodes[i], nodes[i + 1]) for i in range(skip, len(nodes) - 1, 2)]
            )
        return self._levels[level]


def fold(hashes: Sequence[bytes]) -> bytes:
    """The root of a complete subtree given its 2**k bottom hashes."""
    level = list(hashes)
    while len(level) > 1:
        level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


class StreamedTree:
    """The tree of `size` leaves as a monitor verified it while streaming (ledger/monitor/
    follow.py): the complete nodes before `start` come from `below`'s tiles, those from `start` on
    at tile height (level 8) and above from `tops`, the roots of the full level-0 tiles the
    caller recomputed from entries, and the nodes under tile height from the level-0 tiles again.

    A re-read level-0 tile must fold to the root recomputed for it (else `changed` is raised, so a
    server cannot answer differently the second time); the partial tile at the end is the one
    the caller recomputed (`partial`). Memory: 32 bytes and a little per 256 leaves, and at most
    `cached` level-0 tiles, whatever the size. `start` is a multiple of 256.
    """

    def __init__(
        self,
        start: int,
        size: int,
        tops: Sequence[bytes],
        partial: Sequence[bytes],
        below: TileHashes,
        changed: Callable[[Tile], Exception],
        cached: int = 16,
    ) -> None:
        if start % TILE_WIDTH:
            raise ValueError(f"the streamed part starts on a tile boundary, not at {start}")
        self.start, self.size = start, size
        self._below, self._changed, self._cached = below, changed, cached
        self._partial = list(partial)
        self._levels: list[list[bytes]] = [list(tops)]
        self._first = start // TILE_WIDTH  # index of tops[0] among level-0 tiles
        self._leaf_tiles: dict[int, list[bytes]] = {}

    def node(self, level: int, index: int) -> bytes:
        """Complete node `index` at `level`; LookupError when the tree has no such node."""
        low, high = index << level, (index + 1) << level
        if level < 0 or index < 0 or high > self.size:
            raise LookupError(f"no complete node {level}/{index} in a tree of {self.size}")
        if high <= self.start:
            return self._below.node(level, index)
        if level < TILE_HEIGHT:
            hashes = self._leaf_tile(low // TILE_WIDTH)
            offset = low % TILE_WIDTH
            return fold(hashes[offset : offset + (1 << level)])
        if low < self.start:  # straddles the start: only above tile height
            return node_hash(self.node(level - 1, 2 * index), self.node(level - 1, 2 * index + 1))
        first = -(-self._first >> (level - TILE_HEIGHT))
        return self._level(level - TILE_HEIGHT)[index - first]

    def _level(self, level: int) -> list[bytes]:
        while len(self._levels) <= level:
            below = len(self._levels) - 1
            nodes, first = self._levels[below], -(-self._first >> below)
            skip = 2 * -(-self._first >> (below + 1)) - first
            self._levels.append(
                [node_hash(nodes[i], nodes[i + 1]) for i in range(skip, len(nodes) - 1, 2)]
            )
        return self._levels[level]

    def _leaf_tile(self, index: int) -> list[bytes]:
        if (index + 1) * TILE_WIDTH > self.size:
            return self._partial
        if index not in self._leaf_tiles:
            tile = tile_for(0, index, self.size)
            hashes = decode_hashes(self._below.read(tile), tile)
            if fold(hashes) != self._levels[0][index - self._first]:
                raise self._changed(tile)
            if len(self._leaf_tiles) >= self._cached:
                del self._leaf_tiles[next(iter(self._leaf_tiles))]
            self._leaf_tiles[index] = hashes
        return self._leaf_tiles[index]
