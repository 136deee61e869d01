"""Crash recovery: after a SIGKILL at any moment, bring derived storage back in line with the JSONL.

The JSONL files are the truth. A torn last line (no newline: the write was cut) is moved to a
quarantine file, never deleted. The index and the Merkle node files only ever lag the JSONL (they
are written after its fsync), so recovery truncates what does not match and replays the missing
leaves.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from pathlib import Path

import orjson

from ledger import merkle
from ledger.exceptions import IndexCorrupt
from ledger.jsonl import fsync_dir, last_line_end
from ledger.jsonl import iter_lines as jsonl_lines
from ledger.store.index import LeafRow, LedgerIndex, row_for
from ledger.store.tree import FileNodeStore

log = logging.getLogger(__name__)
_BATCH = 4096


def quarantine_torn_tail(path: Path, quarantine_dir: Path) -> int:
    """Move the bytes after the last newline of `path` into a new file in `quarantine_dir`.

    Returns the number of bytes moved (0 when the file ends with a newline or does not exist). The
    quarantine copy is fsynced before `path` is truncated, so the bytes exist somewhere at every
    moment.
    """
    if not path.exists():
        return 0
    with open(path, "r+b") as ledger_file:
        start = last_line_end(ledger_file)
        ledger_file.seek(start)
        tail = ledger_file.read()
        if not tail:
            return 0
        quarantine_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = quarantine_dir / f"{path.name}.{stamp}.at-{start}.torn"
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(tail)
            out.flush()
            os.fsync(out.fileno())
        fsync_dir(quarantine_dir)
        ledger_file.truncate(start)
        ledger_file.flush()
        os.fsync(ledger_file.fileno())
    log.warning("moved a torn last line of %s (%d bytes) to %s", path, len(tail), target)
    return len(tail)


def reconcile_index(index: LedgerIndex, jsonl: Path) -> int:
    """Drop index rows past the JSONL's end, index lines it lacks; return the leaf count."""
    size = jsonl.stat().st_size if jsonl.exists() else 0
    count = index.count()
    last = index.leaf(count - 1) if count else None
    if last is not None and (last.offset + last.length >= size or not _row_matches(jsonl, last)):
        log.warning("index of %s disagrees with it; rebuilding the index", jsonl)
        index.truncate(0)
        count, last = 0, None
    start = last.offset + last.length + 1 if last is not None else 0  # past its newline
    batch = []
    for offset, line in jsonl_lines(jsonl, start):
        batch.append(row_for(_parse(line, count, jsonl), count, offset, len(line)))
        count += 1
        if len(batch) >= _BATCH:
            index.add(batch)
            batch = []
    index.add(batch)
    index.flush()
    return count


def reconcile_tree(nodes: FileNodeStore, index: LedgerIndex, jsonl: Path, leaf_count: int) -> None:
    """Truncate the node files to the longest prefix they hold consistently, then replay to
    leaf_count.
    """
    consistent = _consistent_leaves(nodes, leaf_count)
    if consistent and not _last_leaf_matches(nodes, index, jsonl, consistent):
        consistent = 0
    for level in nodes.levels():
        nodes.truncate(level, consistent >> level)
    if consistent < leaf_count:
        log.info("replaying Merkle nodes for leaves %d..%d", consistent, leaf_count - 1)
        _replay(nodes, index, jsonl, consistent, leaf_count)


def _consistent_leaves(nodes: FileNodeStore, leaf_count: int) -> int:
    consistent = min(nodes.count(0), leaf_count)
    level = 1
    while (1 << level) <= leaf_count:
        consistent = min(consistent, ((nodes.count(level) + 1) << level) - 1)
        level += 1
    return consistent


def _last_leaf_matches(nodes: FileNodeStore, index: LedgerIndex, jsonl: Path, count: int) -> bool:
    row = index.leaf(count - 1)
    return row is not None and nodes.node(0, count - 1) == merkle.leaf_hash(_read(jsonl, row))


def _replay(
    nodes: FileNodeStore, index: LedgerIndex, jsonl: Path, first: int, leaf_count: int
) -> None:
    row = index.leaf(first)
    if row is None:
        raise IndexCorrupt(f"leaf {first} is not indexed; run `crovia reindex`")
    leaf_index = first
    for _offset, line in jsonl_lines(jsonl, row.offset):
        if leaf_index >= leaf_count:
            break
        merkle.append_leaf(nodes, leaf_index, merkle.leaf_hash(line))
        leaf_index += 1
        if leaf_index % _BATCH == 0:
            nodes.flush()
    nodes.flush()


def _row_matches(jsonl: Path, row: LeafRow) -> bool:
    """The row still names a whole line holding its axiom_id: a line edited to another length
    shifts every later line, and a shifted window can hold the id without being the line."""
    before = 1 if row.offset else 0
    with open(jsonl, "rb") as src:
        data = os.pread(src.fileno(), before + row.length + 1, row.offset - before)
    whole = data[:before] == b"\n"[:before] and data[before + row.length :] == b"\n"
    return whole and f'"axiom_id":"{row.axiom_id}"'.encode() in data


def _read(jsonl: Path, row: LeafRow) -> bytes:
    with open(jsonl, "rb") as src:
        return os.pread(src.fileno(), row.length, row.offset)


def _parse(line: bytes, leaf_index: int, jsonl: Path) -> dict:
    try:
        envelope = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise IndexCorrupt(
            f"{jsonl} line {leaf_index} is not JSON ({exc}); run `crovia audit`"
        ) from exc
    if not isinstance(envelope, dict):
        raise IndexCorrupt(f"{jsonl} line {leaf_index} is not an envelope; run `crovia audit`")
    return envelope
