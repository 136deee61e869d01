"""JSONL files as the ledger uses them: durable appends, complete lines only, the last line.

A line counts once its newline is written; bytes after the last newline are a torn write, which
readers skip and the writer's recovery moves to quarantine (ledger/store/recovery.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import orjson

_CHUNK = 1 << 16
_IOV_MAX = 1024  # buffers per writev: Linux's limit (POSIX promises only 16; we run on Linux)


def append_durably(fd: int, chunks: Sequence[bytes]) -> None:
    """Append `chunks` (whole lines) to the O_APPEND file `fd` and fsync before returning.

    Written with writev, so a large batch is never copied into one buffer first. On an error (a
    full disk) the file is cut back to its old end: the next append must not follow a torn line.
    """
    end = os.fstat(fd).st_size
    try:
        for start in range(0, len(chunks), _IOV_MAX):
            _write_all(fd, chunks[start : start + _IOV_MAX])
        os.fsync(fd)
    except BaseException:
        os.ftruncate(fd, end)
        raise


def _write_all(fd: int, chunks: Sequence[bytes]) -> None:
    written = os.writev(fd, chunks)
    if written < sum(map(len, chunks)):  # a short write: finish the rest the slow way
        rest = memoryview(b"".join(chunks))[written:]
        while rest:
            rest = rest[os.write(fd, rest) :]


def append_to(path: Path, data: bytes) -> None:
    """`append_durably` to the file at `path` (created if missing)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        append_durably(fd, [data])
    finally:
        os.close(fd)


def iter_lines(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(offset, line without newline) for each complete line from byte `start`; a torn tail is
    skipped. With `end` (a line end, as `complete_size` gave it earlier), lines past it are not
    read: what was appended since is not seen.
    """
    if not path.exists():
        return
    with open(path, "rb") as src:
        src.seek(start)
        offset = start
        for raw in src:
            if not raw.endswith(b"\n") or (end is not None and offset + len(raw) > end):
                return
            yield offset, raw[:-1]
            offset += len(raw)


def complete_size_or_zero(path: Path) -> int:
    """`complete_size`, or 0 when there is no file."""
    try:
        return complete_size(path)
    except FileNotFoundError:
        return 0


def complete_size(path: Path) -> int:
    """Bytes of `path` up to and including its last newline (a torn tail excluded)."""
    with open(path, "rb") as handle:
        return last_line_end(handle)


def last_line_end(handle: BinaryIO) -> int:
    """Offset just past the last newline (0 if none)."""
    end = handle.seek(0, os.SEEK_END)
    position = end
    while position > 0:
        step = min(_CHUNK, position)
        position -= step
        handle.seek(position)
        chunk = handle.read(step)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return position + newline + 1
    return 0


def last_line(path: Path) -> dict[str, Any] | None:
    """The last complete line of a JSONL file, parsed; None when there is none."""
    if not path.exists():
        return None
    with open(path, "rb") as src:
        size = src.seek(0, os.SEEK_END)
        window = 1 << 14
        while True:
            start = max(0, size - window)
            src.seek(start)
            chunk = src.read(size - start)
            lines = chunk[: chunk.rfind(b"\n") + 1].splitlines()
            if len(lines) >= 2 or start == 0:
                return orjson.loads(lines[-1]) if lines else None
            window *= 4


def fsync_dir(directory: Path) -> None:
    """Make a file created, renamed or removed in `directory` durable (fsync of the directory)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
