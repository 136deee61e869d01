"""Issue 19, observation 1: publishing wrote every file with two fsyncs (the file and its
directory), so a 1M-leaf ledger took from 19 minutes to 1.8 hours. Now one ordered sync per
publish: every new file first, one sync of the file system, the checkpoint that makes them
reachable last (docs/ledger.md, "Publishing")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ledger.publish import WRITERS, publish, write_receipts
from ledger.publish import publish_dir as publish_dir_module
from tests.ledger.conftest import Log


@pytest.fixture
def journal(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every fsync, file system sync and rename the publisher makes, in order (each still done:
    the real calls run, only their order is noted)."""
    events: list[tuple[str, str]] = []
    fsync, replace, syncfs = os.fsync, os.replace, publish_dir_module.sync_file_system

    def noted_fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        fsync(fd)

    def noted_replace(source, target) -> None:
        replace(source, target)
        events.append(("rename", str(target)))

    def noted_syncfs(directory: Path) -> None:
        syncfs(directory)
        events.append(("syncfs", str(directory)))

    monkeypatch.setattr(os, "fsync", noted_fsync)
    monkeypatch.setattr(os, "replace", noted_replace)
    monkeypatch.setattr(publish_dir_module, "sync_file_system", noted_syncfs)
    return events


def test_far_fewer_syncs_than_files_and_the_checkpoint_last(log: Log, journal) -> None:
    log.grow(300)
    log.grow(213)
    journal.clear()
    report = publish(log.ledger_dir, log.pub, writers=(*WRITERS, write_receipts))
    renames = [target for kind, target in journal if kind == "rename"]
    syncs = [event for event in journal if event[0] != "rename"]
    assert len(renames) == len(report.written) > 513  # every receipt, tile, bundle and seal
    assert len(syncs) <= 3, syncs  # one syncfs, then the checkpoint's file and directory
    assert report.syncs == len(syncs)
    # The order: every other file renamed into place, then the sync, then the checkpoint.
    first_sync = next(n for n, (kind, _) in enumerate(journal) if kind != "rename")
    assert journal[first_sync][0] == "syncfs"
    assert all(kind == "rename" for kind, _ in journal[:first_sync])
    assert [target for kind, target in journal[first_sync:] if kind == "rename"] == [
        str(log.pub / "checkpoint")
    ]
    assert renames[-1] == str(log.pub / "checkpoint")


def test_publish_plus_a_few_leaves_syncs_as_little(log: Log, journal) -> None:
    log.grow(600)
    publish(log.ledger_dir, log.pub, writers=(*WRITERS, write_receipts))
    journal.clear()
    log.grow(40)
    journal.clear()
    report = publish(log.ledger_dir, log.pub, writers=(*WRITERS, write_receipts))
    assert report.previous_size == 600 and len(report.written) > 40
    assert sum(kind != "rename" for kind, _ in journal) <= 3


def test_a_full_publish_over_itself_rewrites_nothing_but_replaces_what_differs(
    log: Log, journal
) -> None:
    log.grow(300)
    publish(log.ledger_dir, log.pub)
    tile = log.pub / "tile/0/000"
    tile.write_bytes(b"\0" * 32 * 256)  # damaged on disk: replaced, durably, at once
    journal.clear()
    publish(log.ledger_dir, log.pub, full=True)
    renamed = [target for kind, target in journal if kind == "rename"]
    assert renamed == [str(tile), str(log.pub / "checkpoint")]
    assert tile.read_bytes() != b"\0" * 32 * 256
    fsynced = [target for kind, target in journal if kind == "fsync"]
    assert fsynced[0].startswith(str(tile.parent)) and str(log.pub) in fsynced


def test_files_written_without_a_checkpoint_are_synced_on_close(tmp_path: Path, journal) -> None:
    """A writer that ends without a checkpoint (a refreshed page, a hand-over with no new seal)
    still leaves its files durable: closing the directory syncs them once."""
    with publish_dir_module.PublishDir.open(tmp_path / "pub") as out:
        out.write("index.html", b"<p>page</p>")
        out.write("receipts/a.json", b"{}")
        assert not any(kind == "syncfs" for kind, _ in journal)
    assert [kind for kind, _ in journal if kind != "rename"] == ["syncfs"]
    with publish_dir_module.PublishDir.open(tmp_path / "pub") as out:
        out.write("index.html", b"<p>page</p>")  # the same bytes: nothing written, no sync
    assert [kind for kind, _ in journal if kind != "rename"] == ["syncfs"]
