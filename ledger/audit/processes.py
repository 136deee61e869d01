"""The per-line checks of a large `crovia audit` on worker processes instead of threads.

On threads, only signature verification runs in parallel (PyNaCl releases the GIL); parsing,
re-encoding, hashing and the shape checks of each line hold it, so on two cores the audit of a
large ledger cost more than one core verifying the signatures alone. Worker processes share no
GIL. The parent cuts the ledger into blocks that end at a line end (a torn tail is never read as
a line), reading only the few KiB before each cut, and sends each block's offset and length (a
worker reads the bytes itself, so they never cross a pipe). A worker takes its block's first
leaf index from the first line's anchor height (a ledger line's is its line number); the parent,
which settles the answers in ledger order and so knows each block's real first leaf, has a block
whose guess was wrong or unreadable checked again from there (only a broken ledger has one), so
every leaf is checked and named under its own index. With at most four blocks per worker in
flight (the parent's own per-leaf work never leaves a worker idle), it gets back either:
- a `PassedBlock`, when every line passed, each anchor height is its line number and the
  block's index rows, read by the worker, equal the rows its lines give: the leaf hashes packed
  in one byte string, which is all the parent's tree and seals still need (the common case: a
  few bytes a leaf to pickle instead of a tuple per leaf, and no per-leaf work in the parent
  besides the tree);
- or the same `LeafFacts` `checked_lines` gives, which the parent checks leaf by leaf against
  the index as it does for threads, naming what differs.
A failure in a worker reaches the parent with its check, message and values. The worker
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
from ledger.envelope import ANCHOR_CHAIN
from ledger.exceptions import LineInvalid, VerificationError
from ledger.store.bodies import CitedBodies
from ledger.store.reader import INDEX_FILE

# Below this many bytes of ledger, starting processes costs more than it saves.
PROCESS_MIN_BYTES = 32 << 20
_BLOCK_BYTES = 1 << 19
_WINDOW_BYTES = 1 << 14  # read back from a block's end to find its last newline
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
        in_flight: deque[tuple[int, int, Future[_Answer]]] = deque()
        first = 0  # the first leaf of the next block to settle

        def settle(
            offset: int, length: int, future: Future[_Answer]
        ) -> PassedBlock | list[LeafFacts]:
            nonlocal first
            answer = future.result()
            if answer.first != first:  # the worker's guess (`_check_block`) was wrong: redo
                answer = pool.submit(_check_block, first, offset, length).result()
            if answer.error is not None:
                raise answer.error
            first += answer.count
            return answer.result  # type: ignore[return-value]  # set when error is None

        try:
            for offset, length in _cuts(ledger_file, end):
                start = 0 if offset == 0 else None
                in_flight.append((offset, length, pool.submit(_check_block, start, offset, length)))
                if len(in_flight) >= 4 * workers:
                    yield settle(*in_flight.popleft())
            while in_flight:
                yield settle(*in_flight.popleft())
        finally:  # a refusal or a closed generator: blocks not started are not checked
            for _offset, _length, future in in_flight:
                future.cancel()


class _Answer(NamedTuple):
    """A worker's answer for a block whose first leaf it took to be `first` (-1: unknown)."""

    first: int
    count: int  # lines checked
    result: PassedBlock | list[LeafFacts] | None
    error: VerificationError | None  # the first failure, named with `first`


def _start_method() -> str:
    """`fork` when this process runs one thread (the `crovia audit` command): the workers start
    with the ledger code already imported, which spawning would import again in each (about a
    tenth of a second of CPU apiece, a few percent of a 100,000-leaf audit). With other threads
    alive (a library caller, a test run), a fork could copy a lock another thread holds, so
    `spawn`."""
    single = threading.active_count() == 1
    return "fork" if single and "fork" in multiprocessing.get_all_start_methods() else "spawn"


def _cuts(ledger_file: Path, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(offset, length) of blocks of complete lines of about _BLOCK_BYTES, each ending in a
    newline, within the first `end` bytes (or the file's size when the walk starts); a line
    crossing `end` is not read, as in `jsonl.iter_lines`. Only the few KiB before each cut are
    read here: the parent neither copies nor counts a block's lines (its worker finds its first
    leaf, `_check_block`)."""
    fd = os.open(ledger_file, os.O_RDONLY)
    try:
        limit = os.fstat(fd).st_size if end is None else end
        offset = 0
        while offset < limit:
            cut = _cut(fd, offset, min(offset + _BLOCK_BYTES, limit), limit)
            if cut is None:  # the file or the snapshot ends inside a line: never read as one
                return
            yield offset, cut - offset
            offset = cut
    finally:
        os.close(fd)


def _cut(fd: int, offset: int, stop: int, limit: int) -> int | None:
    """The offset just past the last newline in [offset, stop), else past the first one in
    [stop, limit) (a line longer than a block), else None."""
    high = stop
    while high > offset:  # backwards, a window at a time: lines are a few KiB
        low = max(offset, high - _WINDOW_BYTES)
        at = os.pread(fd, high - low, low).rfind(b"\n")
        if at >= 0:
            return low + at + 1
        high = low
    while stop < limit:
        data = os.pread(fd, min(_BLOCK_BYTES, limit - stop), stop)
        if not data:  # the file shrank: its worker says so
            return None
        at = data.find(b"\n")
        if at >= 0:
            return stop + at + 1
        stop += len(data)
    return None


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


def _check_block(start: int | None, offset: int, length: int) -> _Answer:
    """Check a block's lines as leaves `start`, `start` + 1, ... With `start` None (the parent
    has not counted the lines before it), the block's first line is taken at the height its
    anchor claims, which the parent holds to the lines it has settled (a wrong or unreadable
    claim: the block is checked again from its real first leaf)."""
    keys: AuditKeys = _WORKER["keys"]  # type: ignore[assignment]
    checks: tuple[LeafCheck, ...] = _WORKER["checks"]  # type: ignore[assignment]
    block = os.pread(_WORKER["fd"], length, offset)  # type: ignore[arg-type]
    if start is None:
        start = _claimed_first(block)
        if start is None:
            return _Answer(-1, 0, None, None)
    if len(block) != length:
        shrank = LineInvalid(f"leaf {start}: the ledger file shrank during the audit")
        return _Answer(start, 0, None, shrank)
    facts: list[LeafFacts] = []
    at, find = 0, block.find
    try:
        while (stop := find(b"\n", at)) >= 0:  # memchr: `split` compares byte by byte
            facts.append(check_line(block[at:stop], start + len(facts), offset + at, keys, checks))
            at = stop + 1
    except VerificationError as exc:  # settled by the parent, which knows whether `start` holds
        return _Answer(start, len(facts), None, exc)
    return _Answer(start, len(facts), _passed(start, facts) or facts, None)


_FIRST_ANCHOR = b'{"anchors":[{"chain":"' + ANCHOR_CHAIN.encode() + b'","height":'


def _claimed_first(block: bytes) -> int | None:
    """The height the first line's anchor claims (a ledger line's is its line number), or None."""
    if not block.startswith(_FIRST_ANCHOR):
        return None
    digits = block[len(_FIRST_ANCHOR) : block.find(b",", len(_FIRST_ANCHOR), 80)]
    return int(digits) if digits.isdigit() else None


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
