"""BodyStore.put_many: a batch's blobs kept as `put` keeps one, with two syncs for the lot."""

from __future__ import annotations

import hashlib

import pytest

from ledger.exceptions import BodyMismatch
from ledger.store import BodyStore
from ledger.store import bodies as bodies_module


def blobs(n: int) -> dict[str, bytes]:
    out = {}
    for i in range(n):
        data = f"blob {i} ".encode() * (i + 1)
        out[hashlib.sha256(data).hexdigest()] = data
    return out


@pytest.mark.parametrize("syncfs", ["libc", "none"])
def test_every_blob_is_kept_and_read_back(tmp_path, monkeypatch, syncfs):
    if syncfs == "none":  # a system without syncfs: each file and directory is synced instead
        monkeypatch.setattr(bodies_module, "_SYNCFS", None)
    else:
        assert bodies_module._SYNCFS is not None  # Linux: the one-sync path is the one tested
    store = BodyStore(tmp_path)
    batch = blobs(40)
    store.put_many(batch)
    for digest, data in batch.items():
        assert store.get(digest) == data
    assert not list(tmp_path.rglob("*.tmp"))
    # Kept ones are left as they are, and the same bytes as `put` writes.
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.gz")}
    store.put_many(batch)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.gz")} == before
    (tmp_path / "other").mkdir()
    other = BodyStore(tmp_path / "other")
    for data in batch.values():
        other.put(data)
    for digest in batch:
        assert other.path(digest).read_bytes() == store.path(digest).read_bytes()


def test_a_blob_that_is_not_its_digest_keeps_nothing_of_the_batch(tmp_path):
    store = BodyStore(tmp_path)
    batch = blobs(5)
    wrong = dict(batch)
    wrong[next(iter(batch))] = b"other bytes"
    with pytest.raises(BodyMismatch, match="changed on its way"):
        store.put_many(wrong)
    assert not list(tmp_path.rglob("*.gz")) and not list(tmp_path.rglob("*.tmp"))
