"""Tile paths, hash tiles, entry bundles and changed tiles (C2SP tlog-tiles)."""

from __future__ import annotations

import hashlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.exceptions import EntryTooLarge, TileMalformed
from ledger.tlog import tiles
from ledger.tlog.tiles import Tile


@pytest.mark.parametrize(
    ("index", "path"),
    [(0, "000"), (7, "007"), (999, "999"), (1000, "x001/000"), (1234067, "x001/x234/067")],
)
def test_index_paths_are_x_prefixed_three_digit_elements(index: int, path: str) -> None:
    assert tiles.index_path(index) == path


def test_tile_and_bundle_paths() -> None:
    assert Tile(0, 1234067).path == "tile/0/x001/x234/067"
    assert Tile(2, 5, 17).path == "tile/2/005.p/17"
    assert Tile(0, 5, 17).entries_path == "tile/entries/005.p/17"
    assert Tile(0, 1000).entries_path == "tile/entries/x001/000"
    with pytest.raises(ValueError, match="only level-0"):
        _ = Tile(1, 0).entries_path
    with pytest.raises(ValueError, match="1 to 256"):
        _ = Tile(0, 0, 0).path


def test_the_spec_example_of_a_tree_of_70000() -> None:
    """273 full level-0 tiles, one partial of width 112, one full level-1 tile, one partial level
    1 tile of width 17, one partial level 2 tile of width 1 (tlog-tiles, "Partial Tiles")."""
    found = tiles.tiles_for_size(70_000)
    level0 = [t for t in found if t.level == 0]
    assert [t for t in level0 if t.full] == [Tile(0, n) for n in range(273)]
    assert [t for t in level0 if not t.full] == [Tile(0, 273, 112)]
    assert [t for t in found if t.level == 1] == [Tile(1, 0), Tile(1, 1, 17)]
    assert [t for t in found if t.level == 2] == [Tile(2, 0, 1)]
    assert len(found) == 277
    assert [t.path for t in found if not t.full] == [
        "tile/0/273.p/112",
        "tile/1/001.p/17",
        "tile/2/000.p/1",
    ]


def test_a_tree_of_256_is_one_full_tile_and_a_partial_level_1_tile() -> None:
    assert tiles.tiles_for_size(256) == [Tile(0, 0), Tile(1, 0, 1)]
    assert tiles.tiles_for_size(255) == [Tile(0, 0, 255)]
    assert tiles.tiles_for_size(0) == []


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        (0, 3, [Tile(0, 0, 3)]),
        (3, 3, []),
        (3, 10, [Tile(0, 0, 10)]),
        (250, 256, [Tile(0, 0), Tile(1, 0, 1)]),
        (256, 300, [Tile(0, 1, 44)]),
        (300, 600, [Tile(0, 1), Tile(0, 2, 88), Tile(1, 0, 2)]),
        (65_535, 65_536, [Tile(0, 255), Tile(1, 0), Tile(2, 0, 1)]),
    ],
)
def test_changed_tiles(old: int, new: int, changed: list[Tile]) -> None:
    assert tiles.changed_tiles(old, new) == changed


def test_a_shrinking_tree_is_refused() -> None:
    with pytest.raises(ValueError, match="not growth"):
        tiles.changed_tiles(10, 9)


@given(st.integers(0, 200_000), st.integers(0, 200_000))
def test_changed_tiles_are_exactly_the_tiles_that_differ(a: int, b: int) -> None:
    old, new = min(a, b), max(a, b)
    before = set(tiles.tiles_for_size(old))
    after = set(tiles.tiles_for_size(new))
    assert set(tiles.changed_tiles(old, new)) == after - before
    # a full tile, once there, stays as it is
    assert {t for t in before if t.full} <= after


def test_hash_tiles_round_trip_and_refuse_a_wrong_length() -> None:
    hashes = [hashlib.sha256(bytes([n])).digest() for n in range(5)]
    data = tiles.encode_hashes(hashes)
    assert data == b"".join(hashes) and len(data) == 160
    assert tiles.decode_hashes(data, Tile(0, 0, 5)) == hashes
    with pytest.raises(TileMalformed, match=r"tile/0/000\.p/6 is not 6 hashes"):
        tiles.decode_hashes(data, Tile(0, 0, 6))
    with pytest.raises(TileMalformed):
        tiles.decode_hashes(data[:-1], Tile(0, 0, 5))
    with pytest.raises(ValueError):
        tiles.encode_hashes([b"short"])


def test_bundles_are_uint16_length_prefixed() -> None:
    entries = [b"", b"a", b"\x00\xff" * 300]
    data = tiles.encode_bundle(entries)
    assert data[:5] == b"\x00\x00\x00\x01a" and data[5:7] == struct.pack(">H", 600)
    assert tiles.decode_bundle(data, Tile(0, 0, 3)) == entries


def test_an_entry_of_65535_bytes_fits_and_one_more_is_refused_naming_the_leaf() -> None:
    biggest = b"x" * tiles.MAX_ENTRY
    assert tiles.decode_bundle(tiles.encode_bundle([biggest]), Tile(0, 0, 1)) == [biggest]
    with pytest.raises(EntryTooLarge, match="leaf 513 is 65536 bytes"):
        tiles.encode_bundle([b"ok", biggest + b"x"], first_index=512)


@pytest.mark.parametrize(
    ("data", "width", "message"),
    [
        (b"\x00\x01a\x00", 2, "cut off"),
        (b"\x00\x05abc", 1, "runs past the end"),
        (b"\x00\x01a", 2, "holds 1 entries"),
        (b"\x00\x01a\x00\x00", 1, "holds 2 entries"),
    ],
)
def test_malformed_bundles_are_refused(data: bytes, width: int, message: str) -> None:
    with pytest.raises(TileMalformed, match=message):
        tiles.decode_bundle(data, Tile(0, 0, width))
