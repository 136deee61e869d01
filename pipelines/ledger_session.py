"""The crawl's ledger: one writer on its own thread, which also answers the index lookups.

Signing and fsync happen on the writer thread (PyNaCl and file I/O release the GIL), so the reactor
keeps going while a batch is made durable; one thread keeps the batches in order. The ledger's
SQLite index belongs to that thread, so dedupe's lookups go there too, a batch of entries' in one
job: a lookup per item from the reactor's thread would wait for the GIL behind the writer every
time. The session is opened while the pipelines are built, before any request:
no key, a key other than the ledger's, or a ledger locked by another crawl, refuses the crawl
(CrawlRefused) with nothing fetched.

Envelopes the issue stage has built but not yet handed to the writer are *held* here, so a lookup
sees them too: an item met twice in one run chains to the envelope of its first sighting even while
that one still waits in the issue stage's batch. A lookup asks about one identity
(ledger/store/index.py's digest of `object.identity`) and one fingerprint: the newest version of
the identity, and whether any earlier version (held or in the ledger) had that content. A held
envelope's axiom_id is computed from the unsigned envelope (docs/format.md: it covers neither
signature nor anchors), only when it is asked for.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple, TypeVar

from scrapy.crawler import Crawler
from scrapy.utils.reactor import is_asyncio_reactor_installed

from crovia_spider.exceptions import CrawlRefused
from crovia_spider.options import resolve_path
from crovia_spider.runs.runlog import utc_now_micro
from ledger.envelope import axiom_id_of
from ledger.exceptions import KeyFileError, LedgerLocked, WrongSigningKey
from ledger.store import IndexEntry, Ledger, Versions, load_ledger_key

logger = logging.getLogger(__name__)
T = TypeVar("T")
_SESSIONS: weakref.WeakKeyDictionary[Crawler, LedgerSession] = weakref.WeakKeyDictionary()


class Latest(NamedTuple):
    """One envelope of an identity (issued, or built and held)."""

    axiom_id: str
    fingerprint: str


class Known(NamedTuple):
    """What dedupe needs of an identity: its newest envelope, and the newest one with the same
    fingerprint as the item at hand (None when no earlier version had that content)."""

    newest: Latest | None
    same: Latest | None


class LedgerSession:
    """Writer and reader of the ledger at CROVIA_LEDGER_DIR for one crawl."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.directory = resolve_path(settings["CROVIA_LEDGER_DIR"])
        self.key_file = resolve_path(settings["CROVIA_SIGNING_KEY_FILE"])
        self.lock_timeout = settings.getfloat("CROVIA_LOCK_TIMEOUT")
        self.seal_every = settings.getint("CROVIA_SEAL_EVERY") or None
        self.log_origin = settings.get("CROVIA_LOG_ORIGIN") or None
        self._pool: ThreadPoolExecutor | None = None
        self.writer: Ledger | None = None
        self._asyncio: bool | None = None  # whether the reactor is asyncio's, once asked
        # identity digest -> [(fingerprint, unsigned envelope)], oldest first
        self._held: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.opened_at = ""  # when the lock was taken (UTC, microseconds, Z)

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

        Raises CrawlRefused (one clear line) for a missing or unusable key, a key other than the
        ledger's (nothing written), or a held lock.
        """
        if self.is_open:
            return
        key = self._load_key()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-writer")
        try:
            self.writer = self._pool.submit(self._open_writer, key).result()
        except (LedgerLocked, WrongSigningKey) as exc:
            self._pool.shutdown()
            self._pool = None
            busy = isinstance(exc, LedgerLocked)
            raise CrawlRefused(
                f"ledger {self.directory} is busy: {exc}" if busy else str(exc)
            ) from None
        self.opened_at = utc_now_micro()

    def hold(self, identity: str, fingerprint: str, envelope: dict[str, Any]) -> None:
        """Note an unsigned envelope built for `identity` and not yet handed to the writer."""
        self._held.setdefault(identity, []).append((fingerprint, envelope))

    def release_held(self) -> None:
        """The held envelopes were handed to the writer: lookups submitted from now on see them."""
        self._held.clear()

    async def known_many(self, asked: list[tuple[str, str]]) -> list[Known]:
        """For each (identity, fingerprint): the newest envelope of the identity and its newest
        one with the fingerprint, held ones first, else the ledger's leaves issued before this
        lookup (in submission order). One job on the writer thread for them all."""
        # Taken now: a batch flushed while the lookup waits may leave the held list, but then it
        # was submitted before the lookup, and the ledger's answer covers it.
        held = [list(self._held.get(identity, ())) for identity, _ in asked]
        job = self.submit(_lookup, asked)
        if self._asyncio is None:
            self._asyncio = is_asyncio_reactor_installed()
        found = await asyncio.wrap_future(job) if self._asyncio else job.result()
        return [
            _known(versions, envelopes, fingerprint)
            for versions, envelopes, (_, fingerprint) in zip(found, held, asked, strict=True)
        ]

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run `fn(self.writer, *args)` on the writer thread, after everything submitted before."""
        return self._pool.submit(fn, self.writer, *args)

    def close(self) -> None:
        """Wait for the writer thread, then release the lock and close the ledger."""
        if self._pool is not None:
            self._pool.submit(self.writer.close).result()
            self._pool.shutdown()
            self._pool = None
        self.writer = None

    def _load_key(self) -> Any:
        if not self.key_file.exists():
            raise CrawlRefused(
                f"no signing key at {self.key_file}: create one with "
                f"`crovia keygen --out {self.key_file}` (or run `make crawl`, which does)"
            )
        try:
            return load_ledger_key(self.key_file, self.directory)  # a raw key: its ledger only
        except KeyFileError as exc:
            raise CrawlRefused(f"signing key unusable: {exc}") from None

    def _open_writer(self, key: Any) -> Ledger:
        return Ledger.open(
            self.directory,
            signing_key=key,
            lock_timeout=self.lock_timeout,
            seal_every=self.seal_every,
            log_origin=self.log_origin,
        )


def _known(found: Versions, held: list[tuple[str, dict[str, Any]]], fingerprint: str) -> Known:
    newest = _latest(found.newest)
    same = _latest(found.same)
    if held:
        newest = Latest(axiom_id_of(held[-1][1]), held[-1][0])
        mine = [envelope for fp, envelope in held if fp == fingerprint]
        same = Latest(axiom_id_of(mine[-1]), fingerprint) if mine else same
    return Known(newest, same)


def _latest(entry: IndexEntry | None) -> Latest | None:
    return None if entry is None else Latest(entry.axiom_id, entry.fingerprint)


def _lookup(writer: Ledger, asked: list[tuple[str, str]]) -> list[Versions]:
    return [writer.versions(identity, fingerprint) for identity, fingerprint in asked]
