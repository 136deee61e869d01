"""A publish directory: files replaced atomically, so a static server never serves a torn one.

Every file is written to a temporary name in its own directory, fsynced, renamed over the target
and the directory fsynced: a reader (or a sync to object storage) sees the old bytes or the new
ones, never a mix. A crash leaves at most temporary files, which the next publisher removes. One
publisher at a time: `PublishDir.open` takes a lock file in the directory.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path, PurePosixPath
from typing import Self

from ledger import lock
from ledger.jsonl import fsync_dir

LOCK_NAME = ".crovia-publish.lock"
TEMP_PREFIX = ".tmp-"


class PublishDir:
    """The root of a published log; use as a context manager (`PublishDir.open(root)`)."""

    def __init__(self, root: Path, lock_fd: int) -> None:
        self.root = root
        self._lock_fd: int | None = lock_fd
        self.written: list[str] = []

    @classmethod
    def open(cls, root: str | os.PathLike[str], lock_timeout: float = 60.0) -> PublishDir:
        """Create `root` if needed, take its lock (LedgerLocked after `lock_timeout` s), and
        remove the temporary files an interrupted publisher left.
        """
        root = Path(root).absolute()
        root.mkdir(parents=True, exist_ok=True)
        published = cls(root, lock.acquire(root / LOCK_NAME, lock_timeout))
        published.remove_temporaries()
        return published

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._lock_fd is not None:
            lock.release(self._lock_fd)
            self._lock_fd = None

    def read(self, relative: str) -> bytes | None:
        """The bytes of a published file, or None when it does not exist."""
        try:
            return self._target(relative).read_bytes()
        except FileNotFoundError:
            return None

    def write(self, relative: str, data: bytes) -> None:
        """Replace `relative` (such as `tile/0/000.p/7`) by `data`, atomically and durably."""
        target = self._target(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, data)
        self.written.append(relative)

    def remove_temporaries(self) -> int:
        """Delete temporary files of interrupted writes; return how many there were."""
        removed = 0
        for path in self.root.rglob(f"{TEMP_PREFIX}*"):
            path.unlink()
            removed += 1
        return removed

    def _target(self, relative: str) -> Path:
        parts = PurePosixPath(relative).parts
        if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
            raise ValueError(f"not a path inside the publish directory: {relative!r}")
        return self.root.joinpath(*parts)


def write_atomically(target: Path, data: bytes) -> None:
    """Replace the file `target` by `data`: a temporary file in the same directory, fsynced,
    renamed over it, and the directory fsynced. A crash leaves the old file or the new one, and
    perhaps a `.tmp-` file beside it."""
    temporary = target.with_name(f"{TEMP_PREFIX}{target.name}-{secrets.token_hex(6)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    fsync_dir(target.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
