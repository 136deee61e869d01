"""The read-again cache of kept bodies (ledger/store/entry_cache.py; issue 30, observation 4):
bounded in rows, bytes and value size, a damaged or foreign value is a miss, several processes
write it at once, and a cache file it cannot open is no cache rather than an error."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from ledger.store.entry_cache import CACHE_FILE, EntryCache

VALUE = {"identities": [{"family": "lab", "guid": "g", "link": "https://x.test/a"}],
         "in_body": 1, "over_limit": 0, "unread": 0}  # fmt: skip


def test_a_value_is_kept_by_key_and_its_hits_counted(tmp_path):
    cache = EntryCache(tmp_path)
    assert cache.get("k") is None and cache.hits("d" * 64) == 0
    cache.put("k", "d" * 64, VALUE)
    assert EntryCache(tmp_path).get("k") == VALUE  # another reader sees it
    assert cache.hits("d" * 64) == 1


def test_the_cache_is_bounded_in_rows_bytes_and_value_size(tmp_path):
    cache = EntryCache(tmp_path, max_rows=3, max_total_bytes=10_000, max_value_bytes=2_000)
    for n in range(5):
        cache.put(f"k{n}", "d" * 64, VALUE)
    assert [cache.get(f"k{n}") is not None for n in range(5)] == [False, False, True, True, True]
    cache.put("big", "d" * 64, {"error": "x" * 3_000})  # over the value bound: not kept
    assert cache.get("big") is None
    wide = EntryCache(tmp_path, max_rows=100, max_total_bytes=4_000, max_value_bytes=2_000)
    for n in range(4):
        wide.put(f"w{n}", "d" * 64, {"error": "y" * 1_500})
    kept = [n for n in range(4) if wide.get(f"w{n}") is not None]
    assert kept == [2, 3]  # the least recently used went first, under 4,000 bytes in all
    (total,) = (
        sqlite3.connect(tmp_path / CACHE_FILE)
        .execute("SELECT SUM(length(value)) FROM reads")
        .fetchone()
    )
    assert total <= 4_000


@pytest.mark.parametrize("stored", [b"not json", b"[1, 2]", b'"text"', b"\xff\xfe"])
def test_a_damaged_value_is_a_miss(tmp_path, stored):
    cache = EntryCache(tmp_path)
    cache.put("k", "d" * 64, VALUE)
    db = sqlite3.connect(tmp_path / CACHE_FILE)
    db.execute("UPDATE reads SET value = ?", (stored,))
    db.commit()
    db.close()
    assert cache.get("k") is None


def test_a_file_that_is_no_database_is_no_cache(tmp_path):
    (tmp_path / CACHE_FILE).write_bytes(b"garbage, not SQLite" * 100)
    cache = EntryCache(tmp_path)
    cache.put("k", "d" * 64, VALUE)
    assert cache.get("k") is None and cache.hits("d" * 64) == 0


def test_a_cache_that_cannot_be_opened_is_no_cache_and_no_error(tmp_path):
    (tmp_path / CACHE_FILE).mkdir()  # as a path SQLite cannot open (read-only ledgers are alike)
    cache = EntryCache(tmp_path)
    cache.put("k", "d" * 64, VALUE)
    assert cache.get("k") is None and cache.hits("d" * 64) == 0


def _writer(directory: str, worker: int) -> None:
    cache = EntryCache(directory)
    for n in range(50):
        cache.put(f"{worker}-{n}", "d" * 64, VALUE)
        assert cache.get(f"{worker}-{n}") == VALUE


def test_several_processes_write_it_at_once(tmp_path):
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    cache = EntryCache(tmp_path)
    assert all(cache.get(f"{w}-{n}") == VALUE for w in range(4) for n in range(50))
