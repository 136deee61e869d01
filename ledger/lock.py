"""The single-writer lock: fcntl.flock on `ledger.lock` in the ledger directory.

flock is released by the kernel when the holder dies, so a SIGKILLed writer never leaves a stale
lock. The holder writes its pid into the file so a waiting writer can say who holds it: once, on
the `ledger.lock` logger, as soon as it starts waiting (a crawl's log or the CLI's stderr), and
again if it gives up.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path

from ledger.exceptions import LedgerLocked

_POLL_SECONDS = 0.05
log = logging.getLogger(__name__)


def acquire(path: Path, timeout: float) -> int:
    """Take the exclusive lock on `path`, waiting up to `timeout` seconds; return the open fd.

    Logs one warning when it has to wait, naming the holder. Raises LedgerLocked naming the
    holder's pid (when it wrote one) and how long it waited.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    started = time.monotonic()
    announced = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            waited = time.monotonic() - started
            if not announced and waited < timeout:
                # Said once, at once: otherwise a waiting cron job looks hung for the whole wait.
                log.warning(
                    "waiting for the ledger lock %s held by another writer (%s), up to %gs",
                    path, _holder(fd), timeout,
                )  # fmt: skip
                announced = True
            if waited >= timeout:
                holder = _holder(fd)
                os.close(fd)
                raise LedgerLocked(
                    f"another writer ({holder}) holds {path}; gave up after {waited:.1f}s "
                    "(raise CROVIA_LOCK_TIMEOUT to wait longer)"
                ) from None
            time.sleep(_POLL_SECONDS)  # flock has no timed wait; polling keeps the bound exact
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def release(fd: int) -> None:
    """Drop the lock and close its fd."""
    os.ftruncate(fd, 0)
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def _holder(fd: int) -> str:
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return f"pid {text}" if text.isdigit() else "pid unknown"


def held(path: Path) -> bool:
    """True while a writer holds the lock on `path`. Creates nothing; a reader's probe takes a
    shared lock for an instant (a writer waiting for it retries within its poll interval)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock too
    return False
