"""`crovia publish`: the tiles, bundles and seals written, incrementally, and what is refused."""

from __future__ import annotations

import orjson
import pytest

from ledger.exceptions import LedgerNotFound, PublishConflict
from ledger.publish import publish, seal_path
from ledger.tlog import tiles
from ledger.tlog.checkpoint import parse_checkpoint
from ledger.tlog.note import parse_note
from ledger.tlog.rfc6962 import leaf_hash, root_of
from tests.ledger.conftest import Log


def ledger_lines(log: Log) -> list[bytes]:
    return (log.ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()


def published_checkpoint(log: Log):
    return parse_checkpoint(parse_note((log.pub / "checkpoint").read_bytes()).text)


def test_a_first_publish_writes_every_tile_bundle_and_seal_then_the_checkpoint(log: Log) -> None:
    log.grow(300)
    log.grow(213)
    report = publish(log.ledger_dir, log.pub)
    every = tiles.tiles_for_size(513)
    bundles = [t.entries_path for t in every if t.level == 0]
    assert report.written == (
        "rotations.json",  # the signed key rotations (none yet: [])
        *(t.path for t in every),
        *bundles,
        seal_path(0),
        seal_path(1),
        "checkpoint",
    )
    lines = ledger_lines(log)
    hashes = [leaf_hash(line) for line in lines]
    assert (log.pub / "tile/0/000").read_bytes() == b"".join(hashes[:256])
    assert (log.pub / "tile/1/000.p/2").read_bytes() == (
        root_of(hashes[:256]) + root_of(hashes[256:512])
    )
    bundle = tiles.decode_bundle((log.pub / "tile/entries/002.p/1").read_bytes(), every[2])
    assert bundle == lines[512:]
    seals = (log.ledger_dir / "seals.jsonl").read_bytes().splitlines()
    assert (log.pub / "seals/001").read_bytes() == seals[1]
    checkpoint = published_checkpoint(log)
    assert (checkpoint.origin, checkpoint.size, checkpoint.root) == (
        log.origin,
        513,
        root_of(hashes),
    )
    stored = orjson.loads((log.ledger_dir / "tlog/checkpoints.jsonl").read_bytes().splitlines()[-1])
    assert (log.pub / "checkpoint").read_bytes() == stored["checkpoint"].encode()


def test_the_next_publish_writes_only_what_changed(log: Log) -> None:
    log.grow(300)
    publish(log.ledger_dir, log.pub)
    log.grow(500)
    report = publish(log.ledger_dir, log.pub)
    changed = tiles.changed_tiles(300, 800)
    assert report.previous_size == 300 and report.size == 800
    assert report.written == (
        *(t.path for t in changed),
        *(t.entries_path for t in changed if t.level == 0),
        seal_path(1),
        "checkpoint",
    )
    assert (log.pub / "tile/0/001").read_bytes() != b""  # the partial tile's full version
    assert publish(log.ledger_dir, log.pub).written == ()


def test_only_sealed_leaves_with_a_checkpoint_are_published(log: Log) -> None:
    log.grow(10)
    log.grow(5, seal=False)
    assert publish(log.ledger_dir, log.pub).size == 10
    assert published_checkpoint(log).size == 10
    assert not (log.pub / "tile/0/000.p/15").exists()


def test_nothing_to_publish_before_the_first_seal(log: Log) -> None:
    log.grow(3, seal=False)
    with pytest.raises(LedgerNotFound, match="no checkpoint yet"):
        publish(log.ledger_dir, log.pub)
    with pytest.raises(LedgerNotFound, match="no ledger"):
        publish(log.ledger_dir.parent / "nothing", log.pub)


def test_another_history_is_never_published_over_without_full(log: Log, tmp_path) -> None:
    log.grow(20)
    publish(log.ledger_dir, log.pub)
    other = Log(tmp_path / "other", log.pub, log.key)
    other.grow(25, tag=1)  # same key and origin, another history
    with pytest.raises(PublishConflict, match="does not extend"):
        publish(other.ledger_dir, log.pub)
    assert published_checkpoint(log).size == 20
    report = publish(other.ledger_dir, log.pub, full=True)
    assert report.previous_size == 20 and published_checkpoint(log).size == 25  # what it replaced


def test_another_log_is_never_published_over_without_full(log: Log, tmp_path) -> None:
    import nacl.signing

    log.grow(20)
    publish(log.ledger_dir, log.pub)
    other = Log(tmp_path / "other", log.pub, nacl.signing.SigningKey.generate())
    other.grow(25)
    with pytest.raises(PublishConflict, match="holds the log"):
        publish(other.ledger_dir, log.pub)
