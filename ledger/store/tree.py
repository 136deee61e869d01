"""Storage of complete Merkle nodes: a flat file per level of 32-byte records (Tessera-style tiles).

The files are derived from the JSONL ledger and rebuilt from it after a crash (see
ledger/store/recovery.py), so they are written without fsync. `MemoryFrontier` keeps only the last
two nodes of each level, enough to append and to compute roots in constant memory (used by `crovia
audit`).
"""

from __future__ import annotations

import os
from pathlib import Path

DIGEST = 32


class FileNodeStore:
    """Complete nodes in `directory/level-KK.bin`; appends are buffered until `flush()`."""

    def __init__(self, directory: Path, *, writable: bool) -> None:
        self.directory = directory
        self.writable = writable
        self._fds: dict[int, int] = {}
        self._stored: dict[int, int] = {}  # nodes on disk per level, refreshed on a miss
        self._pending: dict[int, bytearray] = {}
        if writable:
            directory.mkdir(parents=True, exist_ok=True)

    def count(self, level: int) -> int:
        """Number of complete nodes stored at `level`, including unflushed ones."""
        return self._on_disk(level) + len(self._pending.get(level, b"")) // DIGEST

    def node(self, level: int, index: int) -> bytes:
        """The complete node `index` of `level`. Raises LookupError when it is not stored."""
        stored = self._stored.get(level)
        if stored is None or (index >= stored and not self._pending.get(level)):
            stored = self._on_disk(level)  # first use, or another process appended since
        if index < stored:
            digest = os.pread(self._fds[level], DIGEST, index * DIGEST)
        else:
            offset = (index - stored) * DIGEST
            digest = bytes(self._pending.get(level, b"")[offset : offset + DIGEST])
        if len(digest) != DIGEST:
            raise LookupError(f"Merkle node {level}/{index} is not stored")
        return digest

    def append(self, level: int, digest: bytes) -> None:
        self._pending.setdefault(level, bytearray()).extend(digest)

    def flush(self) -> None:
        """Write buffered nodes at the end of each level file."""
        for level, data in self._pending.items():
            if data:
                fd = self._fd(level)
                end = self._on_disk(level) * DIGEST
                os.pwrite(fd, data, end)
                self._stored[level] = (end + len(data)) // DIGEST
        self._pending.clear()

    def discard(self) -> None:
        """Forget the nodes appended since the last `flush`."""
        self._pending.clear()

    def truncate(self, level: int, count: int) -> None:
        """Keep the first `count` nodes of `level` (crash recovery)."""
        fd = self._fd(level)
        if fd >= 0:
            os.ftruncate(fd, count * DIGEST)
            self._stored[level] = count

    def levels(self) -> list[int]:
        """Levels that have a file on disk."""
        return sorted(int(p.stem.split("-")[1]) for p in self.directory.glob("level-*.bin"))

    def _on_disk(self, level: int) -> int:
        """Whole records in the level file (a torn record at its end does not count)."""
        fd = self._fd(level)
        self._stored[level] = os.fstat(fd).st_size // DIGEST if fd >= 0 else 0
        return self._stored[level]

    def close(self) -> None:
        for fd in self._fds.values():
            if fd >= 0:
                os.close(fd)
        self._fds.clear()

    def _fd(self, level: int) -> int:
        fd = self._fds.get(level, -1)
        if fd < 0:
            path = self.directory / f"level-{level:02d}.bin"
            flags = os.O_RDWR | os.O_CREAT if self.writable else os.O_RDONLY
            if self.writable or path.exists():
                fd = os.open(path, flags, 0o644)
                self._fds[level] = fd
        return fd


class MemoryFrontier:
    """The last two complete nodes of each level, and the leaf count: O(log n) memory.

    Two consecutive nodes have different parities, so each level keeps one slot per parity: a
    node is stored and found with an index, no list searched or trimmed (the audit's per-leaf
    `merkle.append_leaf`)."""

    def __init__(self) -> None:
        self._slots: list[list[bytes]] = []  # level -> [last even-indexed node, last odd one]
        self._counts: list[int] = []  # level -> complete nodes appended

    def node(self, level: int, index: int) -> bytes:
        count = self._counts[level] if 0 <= level < len(self._counts) else 0
        if index >= 0 and count - 2 <= index < count:
            return self._slots[level][index & 1]
        raise LookupError(f"Merkle node {level}/{index} is no longer in memory")

    def append(self, level: int, digest: bytes) -> None:
        if level == len(self._slots):
            self._slots.append([b"", b""])
            self._counts.append(0)
        count = self._counts[level]
        self._slots[level][count & 1] = digest
        self._counts[level] = count + 1
