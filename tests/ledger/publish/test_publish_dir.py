"""The publish directory's atomic writes and the monitor's sources (directory and HTTP)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ledger.exceptions import LedgerLocked, LogMisbehaved, NotPublished, SourceUnavailable
from ledger.monitor import DirectorySource, HttpSource, open_source
from ledger.publish import PublishDir
from ledger.publish.publish_dir import WRITING_MARK
from tests.feedserver import FeedServer, Reply


def test_writes_replace_whole_files_and_leave_no_temporaries(tmp_path: Path) -> None:
    with PublishDir.open(tmp_path / "pub") as out:
        out.write("tile/0/000.p/1", b"a" * 32)
        out.write("tile/0/000.p/1", b"b" * 32)
        out.write("checkpoint", b"text\n")
        assert out.read("tile/0/000.p/1") == b"b" * 32
        assert out.read("tile/0/001") is None
        assert out.written == ["tile/0/000.p/1", "tile/0/000.p/1", "checkpoint"]
    names = sorted(str(p.relative_to(tmp_path / "pub")) for p in (tmp_path / "pub").rglob("*"))
    assert names == [
        ".crovia-publish.lock",
        "checkpoint",
        "tile",
        "tile/0",
        "tile/0/000.p",
        "tile/0/000.p/1",
    ]


def test_temporaries_of_an_interrupted_publisher_are_removed_on_open(tmp_path: Path) -> None:
    stale = tmp_path / "pub" / "tile" / "0" / ".tmp-001-0123456789ab"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half a til")
    (tmp_path / "pub" / WRITING_MARK).touch()  # what a publisher killed while writing leaves
    with PublishDir.open(tmp_path / "pub"):
        assert not stale.exists()


def test_only_a_killed_publisher_costs_a_walk_of_the_tree(tmp_path: Path) -> None:
    """Issue 19: every publish walked the whole directory (a receipt per leaf: seconds at 1M
    leaves) for temporaries that only a killed publisher leaves; it marks the directory while it
    writes, and a clean close clears the mark."""
    with PublishDir.open(tmp_path / "pub") as out:
        out.write("tile/0/000.p/1", b"a" * 32)
        assert (tmp_path / "pub" / WRITING_MARK).exists()
    assert not (tmp_path / "pub" / WRITING_MARK).exists()
    unseen = tmp_path / "pub" / "tile" / "0" / ".tmp-not-walked"
    unseen.write_bytes(b"")
    with PublishDir.open(tmp_path / "pub"):
        assert unseen.exists()  # no mark: the tree was not walked


@pytest.mark.parametrize("bad", ["../x", "/etc/x", "", "tile/../../x"])
def test_paths_outside_the_directory_are_refused(tmp_path: Path, bad: str) -> None:
    with PublishDir.open(tmp_path / "pub") as out, pytest.raises(ValueError):
        out.write(bad, b"x")


def test_one_publisher_at_a_time(tmp_path: Path) -> None:
    with PublishDir.open(tmp_path / "pub"), pytest.raises(LedgerLocked):
        PublishDir.open(tmp_path / "pub", lock_timeout=0)


def test_directory_source(tmp_path: Path) -> None:
    (tmp_path / "tile" / "0").mkdir(parents=True)
    (tmp_path / "tile" / "0" / "000").write_bytes(b"x" * 64)
    source = open_source(str(tmp_path))
    assert isinstance(source, DirectorySource)
    assert source.get("tile/0/000", 64) == b"x" * 64
    with pytest.raises(LogMisbehaved, match="longer than 63"):
        source.get("tile/0/000", 63)
    with pytest.raises(NotPublished):
        source.get("checkpoint", 100)
    with pytest.raises(ValueError):
        source.get("../secret", 100)


def test_http_source_plain_gzip_missing_and_failing(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").write_bytes(b"origin\n1\nroot\n")
    with FeedServer(tmp_path) as server:
        server.script(
            "/tile/entries/000.p/1",
            Reply(200, gzip.compress(b"\x00\x01a"), {"Content-Encoding": "gzip"}),
        )
        server.script("/tile/0/000.p/1", Reply(503, b"busy"))
        source = open_source(server.base + "/")
        assert isinstance(source, HttpSource)
        assert source.get("checkpoint", 100) == b"origin\n1\nroot\n"
        assert source.get("tile/entries/000.p/1", 100) == b"\x00\x01a"
        with pytest.raises(NotPublished, match="404"):
            source.get("tile/0/001", 100)
        with pytest.raises(SourceUnavailable, match="HTTP 503"):
            source.get("tile/0/000.p/1", 100)
        with pytest.raises(LogMisbehaved, match="declares 14 bytes, more than 5"):
            source.get("checkpoint", 5)
        sent = server.requests_for("/checkpoint")[0].headers
        assert "gzip" in sent["accept-encoding"]
