"""C2SP tlog-tiles: tile paths, hash tiles, entry bundles, and which tiles a growing tree changes.

A hash tile at level L holds up to 256 consecutive Merkle tree hashes at tree height 8 * L; a full
tile is 256 hashes (8,192 bytes), the rightmost one of a level may be partial (`.p/<W>`). An entry
bundle holds the entries of the level-0 tile with the same index, each a big-endian uint16 length
and the entry's bytes. Pure: no storage, no I/O. Spec: ../shared/spec/c2sp/tlog-tiles.md.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ledger.exceptions import EntryTooLarge, TileMalformed

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT
HASH_SIZE = 32
MAX_ENTRY = 0xFFFF  # the largest length a uint16 prefix can state
MAX_LEVEL = 63
_LENGTH = struct.Struct(">H")


@dataclass(frozen=True, order=True)
class Tile:
    """Hash tile `index` of `level`, `width` hashes wide (256: full)."""

    level: int
    index: int
    width: int = TILE_WIDTH

    @property
    def full(self) -> bool:
        return self.width == TILE_WIDTH

    @property
    def path(self) -> str:
        """`tile/<L>/<N>[.p/<W>]`."""
        return f"tile/{self.level}/{_index_and_width(self.index, self.width)}"

    @property
    def entries_path(self) -> str:
        """`tile/entries/<N>[.p/<W>]`: the entry bundle of a level-0 tile."""
        if self.level != 0:
            raise ValueError(f"only level-0 tiles have entry bundles, not level {self.level}")
        return f"tile/entries/{_index_and_width(self.index, self.width)}"

    @property
    def start(self) -> int:
        """Index of the first hash of the tile at tree height 8 * level."""
        return self.index * TILE_WIDTH


def index_path(index: int) -> str:
    """`index` in zero-padded 3-digit path elements, all but the last x-prefixed: x001/x234/067."""
    if index < 0:
        raise ValueError(f"a tile index is not negative, not {index}")
    elements = [f"{index % 1000:03d}"]
    index //= 1000
    while index:
        elements.append(f"x{index % 1000:03d}")
        index //= 1000
    return "/".join(reversed(elements))


def _index_and_width(index: int, width: int) -> str:
    if not 1 <= width <= TILE_WIDTH:
        raise ValueError(f"a tile is 1 to 256 hashes wide, not {width}")
    return index_path(index) + ("" if width == TILE_WIDTH else f".p/{width}")


def hashes_at_level(size: int, level: int) -> int:
    """How many hashes tiles of `level` hold for a tree of `size` leaves."""
    return size >> (TILE_HEIGHT * level)


def tile_for(level: int, index: int, size: int) -> Tile:
    """Tile `index` of `level` as it is at tree `size` (full or partial); ValueError if empty."""
    width = min(TILE_WIDTH, hashes_at_level(size, level) - index * TILE_WIDTH)
    if width < 1:
        raise ValueError(f"a tree of {size} leaves has no tile {index} at level {level}")
    return Tile(level, index, width)


def tiles_for_size(size: int) -> list[Tile]:
    """Every tile of a tree of `size` leaves, level by level (what a full publish writes)."""
    return changed_tiles(0, size)


def changed_tiles(old_size: int, new_size: int) -> list[Tile]:
    """The tiles of tree `new_size` that a publisher of tree `old_size` lacks or has narrower.

    Full tiles of the old tree never change; each level's partial tile grows into a fuller one or
    a full one, and tiles after it are new. Raises ValueError when the tree shrinks.
    """
    if not 0 <= old_size <= new_size:
        raise ValueError(f"a tree grows: {old_size} -> {new_size} is not growth")
    changed = []
    for level in range(MAX_LEVEL + 1):
        old, new = hashes_at_level(old_size, level), hashes_at_level(new_size, level)
        if new == 0:
            break
        if new > old:
            first, end = old // TILE_WIDTH, -(-new // TILE_WIDTH)
            changed += (tile_for(level, index, new_size) for index in range(first, end))
    return changed


def encode_hashes(hashes: Iterable[bytes]) -> bytes:
    """A hash tile: the hashes concatenated. Raises ValueError for a hash that is not 32 bytes."""
    hashes = list(hashes)
    if not 1 <= len(hashes) <= TILE_WIDTH or any(len(h) != HASH_SIZE for h in hashes):
        raise ValueError("a hash tile is 1 to 256 hashes of 32 bytes")
    return b"".join(hashes)


def decode_hashes(data: bytes, tile: Tile) -> list[bytes]:
    """The hashes of `tile` from its bytes; TileMalformed unless exactly `tile.width` hashes."""
    if len(data) != tile.width * HASH_SIZE:
        raise TileMalformed(
            f"{tile.path} is not {tile.width} hashes",
            expected=tile.width * HASH_SIZE,
            computed=len(data),
        )
    return [data[offset : offset + HASH_SIZE] for offset in range(0, len(data), HASH_SIZE)]


def encode_bundle(entries: Iterable[bytes], first_index: int = 0) -> bytes:
    """An entry bundle: each entry as a big-endian uint16 length then its bytes.

    Raises EntryTooLarge naming the leaf (`first_index` + position) for an entry over 65,535 bytes.
    """
    parts = []
    for leaf_index, entry in enumerate(entries, first_index):
        check_entry_size(entry, leaf_index)
        parts += (_LENGTH.pack(len(entry)), entry)
    return b"".join(parts)


def check_entry_size(entry: bytes, leaf_index: int) -> None:
    """Raise EntryTooLarge unless `entry` fits an entry bundle (at most 65,535 bytes)."""
    if len(entry) > MAX_ENTRY:
        raise EntryTooLarge(
            f"leaf {leaf_index} is {len(entry)} bytes; a tlog-tiles entry bundle holds at most"
            f" {MAX_ENTRY} bytes per entry"
        )


def decode_bundle(data: bytes, tile: Tile) -> list[bytes]:
    """The entries of the bundle of level-0 `tile`; TileMalformed unless exactly `tile.width`."""
    entries = list(_split_bundle(data, tile))
    if len(entries) != tile.width:
        raise TileMalformed(
            f"{tile.entries_path} holds {len(entries)} entries",
            expected=tile.width,
            computed=len(entries),
        )
    return entries


def _split_bundle(data: bytes, tile: Tile) -> Iterator[bytes]:
    offset = 0
    while offset < len(data):
        if offset + _LENGTH.size > len(data):
            raise TileMalformed(f"{tile.entries_path}: a length prefix is cut off at {offset}")
        (length,) = _LENGTH.unpack_from(data, offset)
        end = offset + _LENGTH.size + length
        if end > len(data):
            raise TileMalformed(
                f"{tile.entries_path}: the entry at byte {offset} runs past the end",
                expected=end,
                computed=len(data),
            )
        yield data[offset + _LENGTH.size : end]
        offset = end
