"""A publish directory: files replaced atomically, so a static server never serves a torn one.

Every file is written to a temporary name in its own directory and renamed over the target: a
reader (or a sync to object storage) sees the old bytes or the new ones, never a mix. A crash
leaves at most temporary files, which the next publisher removes. One publisher at a time:
`PublishDir.open` takes a lock file in the directory. A publisher marks the directory
(`.crovia-publish.writing`) before its first write and clears the mark when it closes, so only
after a publisher was killed does the next one walk the whole tree for temporaries (with a
receipt per leaf, a walk of a 1M-leaf log took seconds: publish +1,000 grew with the log).

Durability is one ordered sync per publish, not two fsyncs per file (issue 19): a NEW file (a
tile, a bundle, a seal, a receipt: nothing published names it yet) is renamed into place without
an fsync, then `sync()` flushes the whole file system once (syncfs(2)), and only then is the file
that makes them reachable (the checkpoint) written with `write_durably` (fsync of the file and of
its directory). A crash before the sync leaves the old checkpoint, which names none of the new
files, so a torn one is never reachable; the next publish writes them again. A file that REPLACES
an existing one is compared first: the same bytes are left alone, other bytes are replaced
durably at once, since the published checkpoint may name it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
from pathlib import Path, PurePosixPath
from typing import Self

from ledger import lock
from ledger.jsonl import fsync_dir

LOCK_NAME = ".crovia-publish.lock"
WRITING_MARK = ".crovia-publish.writing"
TEMP_PREFIX = ".tmp-"


class PublishDir:
    """The root of a published log; use as a context manager (`PublishDir.open(root)`)."""

    def __init__(self, root: Path, lock_fd: int) -> None:
        self.root = root
        self._lock_fd: int | None = lock_fd
        self.written: list[str] = []
        self.syncs = 0  # fsyncs and file system syncs spent (docs/ledger.md, "Publishing")
        self._marked = False
        self._unsynced = False  # files renamed into place since the last sync

    @classmethod
    def open(cls, root: str | os.PathLike[str], lock_timeout: float = 60.0) -> PublishDir:
        """Create `root` if needed, take its lock (LedgerLocked after `lock_timeout` s), and
        remove the temporary files an interrupted publisher left.
        """
        root = Path(root).absolute()
        root.mkdir(parents=True, exist_ok=True)
        published = cls(root, lock.acquire(root / LOCK_NAME, lock_timeout))
        if (root / WRITING_MARK).exists():  # the last publisher was killed while writing
            published.remove_temporaries()
        return published

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Sync what was written and not synced yet (a publish that wrote no checkpoint), clear
        the writing mark and release the lock."""
        if self._unsynced:
            self.sync()
        if self._marked:  # any temporary of a failed write was removed by write_atomically
            (self.root / WRITING_MARK).unlink(missing_ok=True)
            self._marked = False
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
        """Put `data` at `relative` (such as `tile/0/000.p/7`) atomically; durable after the next
        `sync()`. A file that exists with other bytes is replaced durably at once; with the same
        bytes it is left alone (a `--full` publish over itself rewrites nothing)."""
        target = self._target(relative)
        self._mark()
        try:
            if target.read_bytes() != data:
                write_atomically(target, data)
                self.syncs += 2
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, data, durable=False)
            self._unsynced = True
        self.written.append(relative)

    def write_durably(self, relative: str, data: bytes) -> None:
        """`sync()` everything written so far, then replace `relative` by `data` durably: the
        file that makes the others reachable (the checkpoint), written last."""
        self.sync()
        target = self._target(relative)
        self._mark()
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, data)
        self.syncs += 2
        self.written.append(relative)

    def sync(self) -> None:
        """Make every file written so far durable with one sync of the file system."""
        sync_file_system(self.root)
        self.syncs += 1
        self._unsynced = False

    def _mark(self) -> None:
        if not self._marked:
            (self.root / WRITING_MARK).touch()
            self._marked = True

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


def write_atomically(target: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace the file `target` by `data`: a temporary file in the same directory, fsynced,
    renamed over it, and the directory fsynced. A crash leaves the old file or the new one, and
    perhaps a `.tmp-` file beside it. Not `durable`: no fsync (a later `sync_file_system`)."""
    temporary = target.with_name(f"{TEMP_PREFIX}{target.name}-{secrets.token_hex(6)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    if durable:
        fsync_dir(target.parent)


def sync_file_system(directory: Path) -> None:
    """Flush every dirty file and directory of the file system holding `directory`: syncfs(2) on
    Linux (one call, whatever the number of files), else sync(2)."""
    syncfs = getattr(_LIBC, "syncfs", None)
    if syncfs is None:
        os.sync()
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"syncfs {directory}: {os.strerror(error)}")
    finally:
        os.close(fd)


_LIBC = ctypes.CDLL(None, use_errno=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
