"""The per-line checks of a large `crovia audit` on worker processes instead of threads.

On threads, only signature verification runs in parallel (PyNaCl releases the GIL); parsing,
re-encoding, hashing and the shape checks of each line hold it, so on two cores the audit of a
large ledger cost more than one core verifying the signatures alone. Worker processes share no
GIL. The parent reads the ledger in blocks that end at a line end (a torn tail is never read as
a line) to count their lines, sends each block's first leaf index, offset and length (a worker
reads the bytes itself, so they never cross a pipe), and gets back, in ledger order, with at
most four blocks per worker in flight (the parent's own per-leaf work never leaves a worker
idle), either:
- a `PassedBlock`, when every line passed, each anchor height is its line number and the
  block's index rows, read by the worker, equal the rows its lines give: the leaf hashes packed
  in one byte string, which is all the parent's tree and seals still need (the common case: a
  few bytes a leaf to pickle instead of a tuple per leaf, and no per-leaf work in the parent
  besides the tree);
- or the same `LeafFacts` `checked_lines` gives, which the parent checks leaf by leaf against
  the index as it does for threads, naming what differs.
A failure raised in a worker reaches the parent with its check, message and values. The worker
reads the index without the parent's snapshot: rows of leaves already written do not change, and
a row a writer commits during the audit only turns a pending row into a checked one.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

from ledger.audit.index import open_read_only, rows_between
from ledger.audit.keys import AuditKeys
from ledger.audit.leaves import LeafCheck, LeafFacts, check_line
from ledger.exceptions import LineInvalid
from ledger.store.bodies import CitedBodies
from ledger.store.reader import INDEX_FILE

# Below this many bytes of ledger, starting processes costs more than it saves.
PROCESS_MIN_BYTES = 32 << 20
_BLOCK_BYTES = 1 << 19
_WORKER: dict[str, object] = {}


class PassedBlock(NamedTuple):
    """A block of lines that passed every check a line allows, at their heights, with index rows
    equal to theirs (see the module's doc)."""

    first: int  # the first leaf's index
    leaf_hashes: bytes  # 32 bytes a leaf, in order
    end: int  # the file offset just past the block's last newline


def checked_blocks(
    ledger_file: Path, keys: AuditKeys, ledger_dir: Path, workers: int, end: int | None = None
) -> Iterator[PassedBlock | list[LeafFacts]]:
    """Block by block, in ledger order (the lines within the first `end` bytes), a PassedBlock or
    the LeafFacts of its lines (see the module's doc), each line checked as `check_line` does,
    with the kept fetch bodies checked (CitedBodies). Raises the VerificationError of the first
    bad line."""
    context = multiprocessing.get_context(_start_method())
    initargs = (keys, str(ledger_dir), str(ledger_file))
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start, initargs=initargs
    ) as pool:
        in_flight: deque[Future[PassedBlock | list[LeafFacts]]] = deque()
        try:
            for start, offset, length in _blocks(ledger_file, end):
                in_flight.append(pool.submit(_check_block, start, offset, length))
                if len(in_flight) >= 4 * workers:
                    yield in_flight.popleft().result()
            while in_flight:
                yield in_flight.popleft().result()
        finally:  # a refusal or a closed generator: blocks not started are not checked
            for future in in_flight:
                future.cancel()


def _start_method() -> str:
    """`fork` when this process runs one thread (the `crovia audit` command): the workers start
    with the ledger code already imported, which spawning would import again in each (about a
    tenth of a second of CPU apiece, a few percent of a 100,000-leaf audit). With other threads
    alive (a library caller, a test run), a fork could copy a lock another thread holds, so
    `spawn`."""
    single = threading.active_count() == 1
    return "fork" if single and "fork" in multiprocessing.get_all_start_methods() else "spawn"


def _blocks(ledger_file: Path, end: int | None = None) -> Iterator[tuple[int, int, int]]:
    """(first leaf index, offset, length) of blocks of complete lines, each ending in a newline,
    within the first `end` bytes if given (a line crossing `end` is not read, as in
    `jsonl.iter_lines`). The parent only counts newlines: each read starts at the last block's
    end (no bytes carried over and joined), and the count stops at the block's last newline, so
    a block is never copied."""
    start = offset = 0
    size = _BLOCK_BYTES
    fd = os.open(ledger_file, os.O_RDONLY)
    try:
        while (want := size if end is None else min(size, end - offset)) > 0:
            data = os.pread(fd, want, offset)
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                # The file or the snapshot ends inside a line: a torn tail is never read as a
                # line (and a read that `end` caps is never doubled again).
                if len(data) < want or (end is not None and offset + want >= end):
                    return
                size *= 2  # a line longer than a block
                continue
            yield start, offset, cut
            start += data.count(b"\n", 0, cut)
            offset += cut
            size = _BLOCK_BYTES
    finally:
        os.close(fd)


def _start(keys: AuditKeys, ledger_dir: str, ledger_file: str) -> None:
    # Parsed lines are trees of dicts and strings, freed by reference counting as soon as a line
    # is checked: they make no cycles, but the collector still walks the young ones every 700
    # allocations, about a twentieth of a worker's time. A worker lives for one audit.
    gc.disable()
    _WORKER["keys"] = keys
    _WORKER["checks"] = (CitedBodies(ledger_dir),)
    _WORKER["fd"] = os.open(ledger_file, os.O_RDONLY)  # closed when the worker exits
    try:
        _WORKER["index"] = open_read_only(Path(ledger_dir) / INDEX_FILE)
    except sqlite3.DatabaseError:  # the parent reports it; the blocks go back as LeafFacts
        _WORKER["index"] = None


def _check_block(start: int, offset: int, length: int) -> PassedBlock | list[LeafFacts]:
    keys: AuditKeys = _WORKER["keys"]  # type: ignore[assignment]
    checks: tuple[LeafCheck, ...] = _WORKER["checks"]  # type: ignore[assignment]
    block = os.pread(_WORKER["fd"], length, offset)  # type: ignore[arg-type]
    if len(block) != length:
        raise LineInvalid(f"leaf {start}: the ledger file shrank during the audit")
    facts = []
    at, find = 0, block.find
    while (stop := find(b"\n", at)) >= 0:  # memchr: `split` compares byte by byte
        facts.append(check_line(block[at:stop], start + len(facts), offset + at, keys, checks))
        at = stop + 1
    return _passed(start, facts) or facts


def _passed(start: int, facts: list[LeafFacts]) -> PassedBlock | None:
    """The block as a PassedBlock if its heights are its line numbers and the index holds rows
    equal to its lines' rows, else None."""
    index = _WORKER["index"]
    if not facts or index is None:
        return None
    if [f.height for f in facts] != list(range(start, start + len(facts))):
        return None
    try:
        rows = rows_between(index, start, len(facts))  # type: ignore[arg-type]
    except sqlite3.DatabaseError:
        return None
    if rows != [f.index_row for f in facts]:
        return None
    return PassedBlock(start, b"".join([f.leaf_hash for f in facts]), facts[-1].end)
