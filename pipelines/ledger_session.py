"""The crawl's ledger: one writer on its own thread, one reader for index lookups.

Signing and fsync happen on the writer thread (PyNaCl and file I/O release the GIL), so the reactor
keeps parsing while a batch is made durable; one thread keeps the batches in order. The ledger's
SQLite index belongs to the thread that opened it, so dedupe reads through its own read-only handle.
The session is opened by the first stage that needs it, before the first request is sent: no key,
or a ledger locked by another crawl, refuses the crawl (CrawlRefused) with nothing fetched.
"""

from __future__ import annotations

import logging
import sqlite3
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from scrapy.crawler import Crawler

from ledger.exceptions import KeyFileError, LedgerLocked
from ledger.index import IndexEntry
from ledger.keys import load_signing_key
from ledger.store import Ledger
from pipelines.exceptions import CrawlRefused

logger = logging.getLogger(__name__)
T = TypeVar("T")
_READ_ATTEMPTS = 200
_READ_RETRY_SECONDS = 0.005  # a commit of one batch takes milliseconds
_SESSIONS: weakref.WeakKeyDictionary[Crawler, LedgerSession] = weakref.WeakKeyDictionary()


class LedgerSession:
    """Writer and reader of the ledger at CROVIA_LEDGER_DIR for one crawl."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.directory = Path(settings["CROVIA_LEDGER_DIR"])
        self.key_file = Path(settings["CROVIA_SIGNING_KEY_FILE"])
        self.lock_timeout = settings.getfloat("CROVIA_LOCK_TIMEOUT")
        self.seal_every = settings.getint("CROVIA_SEAL_EVERY") or None
        self._pool: ThreadPoolExecutor | None = None
        self.writer: Ledger | None = None
        self._reader: Ledger | None = None

    @classmethod
    def of(cls, crawler: Crawler) -> LedgerSession:
        """The session of `crawler` (one per crawl, shared by the stages)."""
        if crawler not in _SESSIONS:
            _SESSIONS[crawler] = cls(crawler)
        return _SESSIONS[crawler]

    @property
    def is_open(self) -> bool:
        return self.writer is not None

    def open(self) -> None:
        """Load the key, take the ledger lock and open the reader. Idempotent.

        Raises CrawlRefused (one clear line) for a missing or unusable key or a held lock.
        """
        if self.is_open:
            return
        key = self._load_key()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-writer")
        try:
            self.writer = self._pool.submit(self._open_writer, key).result()
        except LedgerLocked as exc:
            self._pool.shutdown()
            self._pool = None
            raise CrawlRefused(f"ledger {self.directory} is busy: {exc}") from None
        self._reader = Ledger.open(self.directory)

    def latest_for_target(self, target_id: str) -> IndexEntry | None:
        """The newest durable leaf for `target_id`, or None.

        The writer thread commits to the same SQLite index meanwhile; a read that meets a commit in
        progress fails with OperationalError (the read-only handle takes the journal for a hot
        one), so it is retried after the commit, like SQLite's own busy handler would.
        """
        for attempt in range(_READ_ATTEMPTS):
            try:
                return self._reader.latest_for_target(target_id)
            except sqlite3.OperationalError:
                if attempt == _READ_ATTEMPTS - 1:
                    raise
                time.sleep(_READ_RETRY_SECONDS)
        raise AssertionError("unreachable")

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run `fn(self.writer, *args)` on the writer thread, after everything submitted before."""
        return self._pool.submit(fn, self.writer, *args)

    def close(self) -> None:
        """Wait for the writer thread, then release the lock and close both handles."""
        if self._pool is not None:
            self._pool.submit(self.writer.close).result()
            self._pool.shutdown()
            self._pool = None
        if self._reader is not None:
            self._reader.close()
        self.writer = self._reader = None

    def _load_key(self) -> Any:
        if not self.key_file.exists():
            raise CrawlRefused(
                f"no signing key at {self.key_file}: create one with "
                f"`crovia keygen --out {self.key_file}` (or run `make crawl`, which does)"
            )
        try:
            return load_signing_key(self.key_file)
        except KeyFileError as exc:
            raise CrawlRefused(f"signing key unusable: {exc}") from None

    def _open_writer(self, key: Any) -> Ledger:
        return Ledger.open(
            self.directory,
            signing_key=key,
            lock_timeout=self.lock_timeout,
            seal_every=self.seal_every,
        )
