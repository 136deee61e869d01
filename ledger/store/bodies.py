"""Kept fetch bodies: the exact bytes a source served, content-addressed in the ledger directory.

An envelope's signed `object.fetch.body_sha256` names the body its item was read from; the body
itself lives in `bodies/<first 2 hex>/<sha256>.gz` (gzip without a timestamp, so one body is one
file, byte for byte, in every ledger). `put` makes the file durable (file fsync, rename, directory
fsync) before it returns, so the writer keeps a body before issuing the envelopes that cite it.
Reading verifies: `copy_to`, `get` and `check_cited` hash what they decompress and raise
BodyMismatch unless it is the named body. See docs/ledger.md.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import re
import secrets
import tempfile
import threading
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from ledger.exceptions import BodyMismatch
from ledger.jsonl import fsync_dir
from ledger.records.capture import KEPT_DIGESTS, browser_blobs, exchange_blobs, is_capture_record
from ledger.records.fetch import is_fetch_record

BODIES_DIR = "bodies"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20
# The crawl's download limit (crovia_spider/settings.py DOWNLOAD_MAXSIZE; a test holds them equal):
# no kept body is longer, so reading stops there (a swapped-in gzip bomb is refused, not inflated).
MAX_BODY_BYTES = 16 * 1024 * 1024
# Level 6 is zlib's default: nearly level 9's size on feed XML, at a fraction of its time.
_LEVEL = 6
# Captured pages (BodyStore.put_many from a capture crawl) at level 1: on HTML pages about 3.6x
# faster than level 6 for about 8% more bytes, where a crawl keeps a page with every capture.
PAGE_LEVEL = 1


class BodyStore:
    """The kept bodies of the ledger at `ledger_dir` (only its writer may `put`)."""

    def __init__(self, ledger_dir: str | Path) -> None:
        self.root = Path(ledger_dir) / BODIES_DIR

    def path(self, digest: object) -> Path:
        """Where the body named `digest` lives. BodyMismatch if `digest` is not 64 lowercase hex
        (so no name from an envelope can reach outside `bodies/`)."""
        if type(digest) is not str or not _SHA256.fullmatch(digest):
            raise BodyMismatch(f"body {digest!r} is not a sha256 (64 lowercase hex)")
        return self.root / digest[:2] / f"{digest}.gz"

    def put(self, data: bytes) -> str:
        """Keep `data` durably (once: a body already kept is left as it is); return its sha256
        hex. Raises OSError when it cannot be written; nothing half-written is ever named."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.path(digest)
        if path.exists():
            return digest
        _make_dirs(path.parent)
        compressed = gzip.compress(data, compresslevel=_LEVEL, mtime=0)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{digest[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(compressed)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        fsync_dir(path.parent)
        return digest

    def put_many(self, blobs: Mapping[str, bytes], level: int = _LEVEL) -> None:
        """Keep every blob of `blobs` (sha256 hex -> bytes) durably, as `put` keeps one (the same
        file, byte for byte), with two syncs for the lot instead of two for each: all are written
        to temporary files, the file system is synced once (syncfs), they are renamed into place,
        and it is synced once more. Where syncfs is not available, each file and directory is
        synced instead. A page capture keeps four blobs (body, two heads, main text), and a sync
        costs milliseconds; plain `os` calls here, as pathlib costs more than the write of a
        head. Raises LedgerError (BodyMismatch) for a blob that is not its digest's, OSError when
        one cannot be written; nothing half-written is ever named."""
        pending: list[tuple[str, str]] = []
        named: set[str] = set()
        made: set[str] = set()
        root = str(self.root)
        try:
            for digest, data in blobs.items():
                self.path(digest)  # a digest, or BodyMismatch: no name reaches outside bodies/
                folder = f"{root}/{digest[:2]}"
                path = f"{folder}/{digest}.gz"
                if path in named or os.path.exists(path):
                    continue
                if hashlib.sha256(data).hexdigest() != digest:
                    raise BodyMismatch(f"body {digest} changed on its way to the ledger")
                if folder not in made:
                    _make_dirs(Path(folder))
                    made.add(folder)
                named.add(path)
                tmp = f"{folder}/.{digest[:16]}.{secrets.token_hex(8)}.tmp"  # as mkstemp names
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                pending.append((tmp, path))
                with os.fdopen(fd, "wb") as out:
                    out.write(gzip.compress(data, compresslevel=level, mtime=0))
            if not pending:
                return
            _sync_files([tmp for tmp, _ in pending])
            for tmp, path in pending:
                os.replace(tmp, path)
            _sync_files(sorted({os.path.dirname(path) for _, path in pending}))
        except BaseException:
            for tmp, _ in pending:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            raise

    def copy_to(self, digest: object, out: BinaryIO, max_size: int = MAX_BODY_BYTES) -> None:
        """Write the body named `digest` to `out` as it is kept, then raise BodyMismatch if it is
        missing, unreadable, longer than `max_size` bytes (reading stops there) or hashes to
        another sha256. `out` may hold part of a body that fails: a caller that must not show it
        writes to a temporary file first (`crovia body`). Errors writing `out` propagate."""
        path = self.path(digest)
        hasher = hashlib.sha256()
        if not path.is_file():
            raise BodyMismatch(f"body {digest} is missing", expected=digest)
        size = 0
        with gzip.open(path, "rb") as src:
            while chunk := _read(src, digest, min(_CHUNK, max_size + 1 - size)):
                size += len(chunk)
                if size > max_size:
                    raise BodyMismatch(
                        f"body {digest} is longer than the {max_size}-byte limit", expected=digest
                    )
                hasher.update(chunk)
                out.write(chunk)
        computed = hasher.hexdigest()
        if computed != digest:
            raise BodyMismatch(
                f"body {digest} holds other bytes", expected=digest, computed=computed
            )

    def get(self, digest: object) -> bytes:
        """The verified bytes of the body named `digest` (BodyMismatch as `copy_to`)."""
        buffer = io.BytesIO()
        self.copy_to(digest, buffer)
        return buffer.getvalue()


class CitedBodies:
    """`check_cited` for a whole audit: each distinct body is read once, from any thread."""

    def __init__(self, ledger_dir: str | Path) -> None:
        self.store = BodyStore(ledger_dir)
        self._verified: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, envelope: Mapping[str, Any], leaf_index: int) -> None:
        """Raise BodyMismatch, naming the leaf and the body, unless the body that `envelope` cites
        (if it cites one) is kept and is the signed bytes. A fetch record (AX.FETCH) cites the
        body it received or the body its 304 confirms, and those of its `parts` (a sitemap
        walk's further fetches), and the error names the record too."""
        # `type(...) is dict` first: a parsed line is a dict, and an ABC check costs more than
        # the rest of a leaf's lookup (the audit's per-leaf hot path).
        if type(envelope) is not dict and not isinstance(envelope, Mapping):
            return
        fetch = (envelope.get("object") or {}).get("fetch")
        if is_capture_record(envelope):
            self._check_capture(envelope, leaf_index)
        elif is_fetch_record(envelope):
            body = envelope.get("body")
            where = f"leaf {leaf_index}: fetch record {envelope.get('axiom_id')}"
            if isinstance(fetch, Mapping) and "body_sha256" in fetch:
                self._check(fetch["body_sha256"], where)
            if isinstance(body, Mapping) and "body_sha256" in body:
                self._check(body["body_sha256"], where)
            parts = body.get("parts") if isinstance(body, Mapping) else None
            for index, part in enumerate(parts if isinstance(parts, list) else ()):
                if isinstance(part, Mapping) and "body_sha256" in part:
                    self._check(part["body_sha256"], f"{where}, part {index}")
        elif fetch is not None:  # envelopes from before fetch evidence cite no body
            mapping = type(fetch) is dict or isinstance(fetch, Mapping)
            digest = fetch.get("body_sha256") if mapping else None
            # Most items cite a body an earlier item cited: no message is built for them (the
            # audit's per-leaf hot path; a set lookup needs no lock under the GIL).
            if digest.__class__ is not str or digest not in self._verified:
                self._check(digest, f"leaf {leaf_index}")

    def _check_capture(self, envelope: Mapping[str, Any], leaf_index: int) -> None:
        """A capture record (AX.CAPTURE) cites the page's body, the request and response heads
        and the main text it extracted (`text.sha256`: the UTF-8 text is kept like a body)."""
        body = envelope.get("body")
        if not isinstance(body, Mapping):
            return
        where = f"leaf {leaf_index}: capture record {envelope.get('axiom_id')}"
        for name in KEPT_DIGESTS:
            if name in body:
                self._check(body[name], f"{where} ({name})")
        text = body.get("text")
        if isinstance(text, Mapping) and "sha256" in text:
            self._check(text["sha256"], f"{where} (main text)")
        for name, digest in browser_blobs(body):  # a browser capture (ledger/records/capture.py)
            self._check(digest, f"{where} ({name})")
        manifest = dict(browser_blobs(body)).get("browser.exchanges_sha256")
        try:
            named = exchange_blobs(self.store, manifest) if manifest else []
        except ValueError as exc:  # kept whole (checked above), yet no manifest: a bad signer
            raise BodyMismatch(f"{where}: its exchanges' manifest is none: {exc}") from None
        for index, name, digest in named:
            self._check(digest, f"{where} (exchange {index}, {name})")

    def _check(self, digest: Any, where: str) -> None:
        with self._lock:
            if digest in self._verified:
                return
        try:
            self.store.copy_to(digest, _DISCARD)
        except BodyMismatch as exc:
            where = f"{where}: kept {exc.args[0]}"
            raise BodyMismatch(where, expected=exc.expected, computed=exc.computed) from None
        with self._lock:
            self._verified.add(digest)


def keep_pages(ledger_dir: str, blobs: Mapping[str, bytes]) -> None:
    """`BodyStore(ledger_dir).put_many(blobs, PAGE_LEVEL)`, as a function a process pool can run:
    the crawl keeps a batch of captured pages in a process of its own (pipelines/issue.py)."""
    BodyStore(ledger_dir).put_many(blobs, PAGE_LEVEL)


def check_cited(envelope: Mapping[str, Any], ledger_dir: str | Path, leaf_index: int) -> None:
    """Raise BodyMismatch naming `leaf_index` and the body unless the body `envelope` cites in
    `object.fetch.body_sha256` is kept in `ledger_dir` with exactly those bytes."""
    CitedBodies(ledger_dir)(envelope, leaf_index)


class _Discard(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return len(data)


_DISCARD = _Discard()


def _sync_files(paths: list[str]) -> None:
    """Make `paths` (files, or directories whose entries changed) durable: one syncfs of their
    file system (Linux), else an fsync of each."""
    if paths and _SYNCFS is not None:
        fd = os.open(paths[0], os.O_RDONLY)
        try:
            if _SYNCFS(fd) == 0:
                return
        finally:
            os.close(fd)
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _libc_syncfs() -> Any:
    """libc's syncfs(2) (Linux), or None: the standard library has no binding for it."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


_SYNCFS = _libc_syncfs()


def _read(src: gzip.GzipFile, digest: str, size: int = _CHUNK) -> bytes:
    try:
        return src.read(size)
    except (OSError, EOFError, zlib.error) as exc:  # a bad gzip header is an OSError
        raise BodyMismatch(f"body {digest} is unreadable ({exc})", expected=digest) from None


def _make_dirs(directory: Path) -> None:
    """Create `directory` (and bodies/) durably: a new entry is fsynced in its parent."""
    for path in (directory.parent, directory):
        if not path.is_dir():
            path.mkdir(exist_ok=True)
            fsync_dir(path.parent)
