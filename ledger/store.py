"""The ledger directory: append-only JSONL ledger, seals, runs, derived index and Merkle nodes.

Layout (docs/ledger.md): axiom_ledger.jsonl (line n = leaf n), seals.jsonl, runs.jsonl,
index.sqlite, tree/level-KK.bin, ledger.lock, quarantine/. Opened with a signing key, a Ledger is
the single writer (exclusive lock, crash recovery on open); without one it is a reader that never
writes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import nacl.signing
import orjson

from ledger import jsonl, lock, merkle, recovery
from ledger.canonical import encode_checked
from ledger.exceptions import (
    DuplicateAxiom,
    EmptyLedger,
    IndexCorrupt,
    LedgerNotFound,
    NotSealed,
    ReadOnlyLedger,
    UnknownAxiom,
    WriterFailed,
)
from ledger.index import IndexEntry, LeafRow, LedgerIndex, row_for
from ledger.receipt import build_receipt
from ledger.seal import build_seal
from ledger.signer import BatchSigner, Signed
from ledger.tree import FileNodeStore

LEDGER_FILE = "axiom_ledger.jsonl"
SEALS_FILE = "seals.jsonl"
RUNS_FILE = "runs.jsonl"
INDEX_FILE = "index.sqlite"
TREE_DIR = "tree"
LOCK_FILE = "ledger.lock"
QUARANTINE_DIR = "quarantine"
T = TypeVar("T")

__all__ = ["IndexEntry", "Issued", "Ledger"]


class Issued(NamedTuple):
    """One envelope made durable by `Ledger.issue`."""

    leaf_index: int
    axiom_id: str
    leaf_hash: str


class Ledger:
    """One ledger directory. Use `Ledger.open(...)`, as a context manager."""

    def __init__(self, directory: Path, signing_key: nacl.signing.SigningKey | None) -> None:
        self.directory = directory
        self.jsonl_path = directory / LEDGER_FILE
        self._key = signing_key
        self._lock_fd: int | None = None
        self._index: LedgerIndex | None = None
        self._nodes: FileNodeStore | None = None
        self._seal_every: int | None = None
        self._leaf_count = 0
        self._last_seal: dict[str, Any] | None = None
        self._signer: BatchSigner | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._jsonl_fd: int | None = None
        self._broken: BaseException | None = None

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        *,
        signing_key: nacl.signing.SigningKey | None = None,
        lock_timeout: float = 60.0,
        seal_every: int | None = None,
        writer: bool | None = None,
    ) -> Ledger:
        """Open a ledger as the writer (with `signing_key`) or as a reader (without).

        The writer creates the directory, takes the lock (raises LedgerLocked after `lock_timeout`
        seconds) and runs crash recovery. A reader raises LedgerNotFound when there is no ledger.
        `writer=True` without a key opens for maintenance (`rebuild_index`): locked, but cannot
        sign.
        """
        ledger = cls(Path(directory).absolute(), signing_key)
        ledger._seal_every = seal_every
        try:
            if writer or (writer is None and signing_key is not None):
                ledger._open_writer(lock_timeout)
            else:
                ledger._open_reader()
        except BaseException:
            ledger.close()
            raise
        return ledger

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the lock and close files. Idempotent."""
        for resource in (self._index, self._nodes):
            if resource is not None:
                resource.close()
        self._index = self._nodes = None
        self._signer = None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._jsonl_fd is not None:
            os.close(self._jsonl_fd)
            self._jsonl_fd = None
        if self._lock_fd is not None:
            lock.release(self._lock_fd)
            self._lock_fd = None

    # -- reading ----------------------------------------------------------------------------------

    @property
    def leaf_count(self) -> int:
        """Leaves durable and indexed (a reader looks again each time)."""
        self._refresh()
        return self._leaf_count

    @property
    def writable(self) -> bool:
        """True when this Ledger holds the writer lock."""
        return self._lock_fd is not None

    def latest_for_target(self, target_id: str) -> IndexEntry | None:
        """The newest leaf whose subject.target_id is `target_id`, or None (an index lookup)."""
        return self._index.latest_for_target(target_id)

    def envelope(self, leaf_index: int) -> dict[str, Any]:
        """The full envelope at `leaf_index`. Raises UnknownAxiom when there is no such leaf."""
        row = self._index.leaf(leaf_index) if leaf_index < self._leaf_count else None
        if row is None:
            raise UnknownAxiom(f"no leaf {leaf_index} (the ledger has {self._leaf_count})")
        return orjson.loads(self._read_line(row.offset, row.length))

    def last_seal(self) -> dict[str, Any] | None:
        """The newest seal, or None."""
        return self._last_seal

    def seals(self) -> Iterator[dict[str, Any]]:
        """Every seal, oldest first (a torn last line is skipped)."""
        for _offset, line in jsonl.iter_lines(self.directory / SEALS_FILE):
            yield orjson.loads(line)

    def runs(self) -> Iterator[dict[str, Any]]:
        """Every run record, oldest first (a torn last line is skipped)."""
        for _offset, line in jsonl.iter_lines(self.directory / RUNS_FILE):
            yield orjson.loads(line)

    def receipt(self, axiom_id: str) -> dict[str, Any]:
        """The crovia.axiom_proof.v1 receipt binding `axiom_id` to the newest seal covering it.

        Raises UnknownAxiom when no leaf has that id, NotSealed when no seal covers it yet.
        """
        self._refresh()
        row = self._index.by_axiom(axiom_id)
        if row is None or row.leaf_index >= self._leaf_count:
            raise UnknownAxiom(f"{axiom_id} is not in the ledger at {self.directory}")
        seal = self._last_seal
        if seal is None or seal["leaf_count"] <= row.leaf_index:
            raise NotSealed(
                f"{axiom_id} (leaf {row.leaf_index}) is not sealed yet; "
                f"run `crovia seal --ledger-dir {self.directory}`"
            )
        line = self._read_line(row.offset, row.length)
        path = self._tree(merkle.inclusion_path, row.leaf_index, seal["leaf_count"])
        return build_receipt(
            envelope=orjson.loads(line),
            leaf_index=row.leaf_index,
            leaf_hash=merkle.leaf_hash(line),
            ledger_path=str(self.jsonl_path),
            path=path,
            seal=seal,
        )

    def merkle_root(self, leaf_count: int | None = None) -> bytes:
        """The root over the first `leaf_count` leaves (default all). Raises EmptyLedger for 0."""
        leaf_count = self._leaf_count if leaf_count is None else leaf_count
        if leaf_count < 1:
            raise EmptyLedger("the ledger has no leaves")
        return self._tree(merkle.root, leaf_count)

    def stats(self) -> dict[str, Any]:
        """Leaves, seals, the last seal, per-vendor leaf counts and runs."""
        self._refresh()
        last = self._last_seal
        return {
            "directory": str(self.directory),
            "leaves": self._leaf_count,
            "seals": sum(1 for _ in jsonl.iter_lines(self.directory / SEALS_FILE)),
            "last_seal": None
            if last is None
            else {k: last[k] for k in ("leaf_count", "merkle_root", "run_id", "sealed_at")},
            "unsealed_leaves": self._leaf_count - (last["leaf_count"] if last else 0),
            "vendors": self._index.vendor_counts(),
            "runs": sum(1 for _ in jsonl.iter_lines(self.directory / RUNS_FILE)),
        }

    # -- writing ----------------------------------------------------------------------------------

    def issue(self, envelopes: Sequence[Mapping[str, Any]]) -> list[Issued]:
        """Sign and append unsigned envelopes; return after one fsync, with each leaf's position.

        Raises ReadOnlyLedger for a reader, CanonicalizationError for a float or other unsignable
        value, DuplicateAxiom for an envelope whose axiom_id is already in the ledger or the batch.
        Nothing is written unless every envelope of the batch is acceptable.
        """
        key = self._writer_key()
        start = self._leaf_count
        signed = self._signer_for(key).sign(list(envelopes), start)
        if not signed:
            return []
        self._refuse_duplicates([full["axiom_id"] for full, _line, _digest in signed])
        rows = self._rows(signed, start)
        lines = [line for _full, line, _digest in signed]
        written = self._helper().submit(jsonl.append_durably, self._jsonl_fd, lines)
        # While the helper thread waits on the disk, stage the index rows and Merkle nodes; they
        # are committed only once the lines are durable, so no derived view runs ahead of them.
        try:
            self._stage(start, [digest for _full, _line, digest in signed], rows)
        except BaseException as exc:
            wait([written])
            self._broken = exc  # the lines may be durable while this view is not: recovery mends it
            raise
        self._commit_when_durable(written, len(signed))
        if self._seal_every and self._unsealed() >= self._seal_every:
            self.seal()
        return [
            Issued(leaf_index, full["axiom_id"], digest.hex())
            for leaf_index, (full, _line, digest) in enumerate(signed, start)
        ]

    def seal(self, *, run_id: str | None = None) -> dict[str, Any]:
        """Cut a signed seal over the whole ledger and make it durable in seals.jsonl.

        With no leaf added since the newest seal, that seal already covers everything: it is
        returned and nothing is written. Raises EmptyLedger on a ledger with no leaves,
        ReadOnlyLedger for a reader.
        """
        key = self._writer_key()
        if self._leaf_count == 0:
            raise EmptyLedger("nothing to seal: the ledger has no leaves")
        if self._unsealed() == 0:
            return self._last_seal
        first = self._index.leaf(self._leaf_count - self._unsealed())
        last = self._index.leaf(self._leaf_count - 1)
        seal = build_seal(
            key=key,
            leaf_count=self._leaf_count,
            merkle_root=self.merkle_root(),
            jsonl_path=str(self.jsonl_path),
            run_id=run_id or f"seal_{self._leaf_count}",
            first=(first.receipt_hash, first.run_hash),
            last=(last.receipt_hash, last.run_hash),
        )
        jsonl.append_to(self.directory / SEALS_FILE, encode_checked(seal) + b"\n")
        self._last_seal = seal
        return seal

    def append_run(self, record: Mapping[str, Any]) -> None:
        """Append one run record to runs.jsonl, durably (fsync before returning).

        Encoded with FORMAT.md's canonical rule through the stdlib, so unsigned run statistics may
        hold floats; raises ValueError for NaN or infinity, TypeError for values JSON cannot hold.
        """
        self._require_lock()
        text = json.dumps(
            record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        jsonl.append_to(self.directory / RUNS_FILE, text.encode("utf-8") + b"\n")

    def rebuild_index(self) -> int:
        """Rebuild the index and the Merkle node files from the JSONL; return the leaf count.

        Raises ReadOnlyLedger unless opened as the writer (a key, or `writer=True`).
        """
        self._require_lock()
        self._index.truncate(0)
        for level in self._nodes.levels():
            self._nodes.truncate(level, 0)
        self._recover()
        return self._leaf_count

    # -- internals --------------------------------------------------------------------------------

    def _open_reader(self) -> None:
        if not (self.directory / INDEX_FILE).exists():
            raise LedgerNotFound(
                f"no ledger at {self.directory} (or no index: run `crovia reindex` as the writer)"
            )
        self._index = LedgerIndex(self.directory / INDEX_FILE, writable=False)
        self._nodes = FileNodeStore(self.directory / TREE_DIR, writable=False)
        self._leaf_count = self._index.count()
        self._last_seal = jsonl.last_line(self.directory / SEALS_FILE)

    def _open_writer(self, lock_timeout: float) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = lock.acquire(self.directory / LOCK_FILE, lock_timeout)
        self.jsonl_path.touch()
        self._index = LedgerIndex(self.directory / INDEX_FILE, writable=True)
        self._nodes = FileNodeStore(self.directory / TREE_DIR, writable=True)
        self._recover()
        self._jsonl_fd = os.open(self.jsonl_path, os.O_WRONLY | os.O_APPEND)

    def _recover(self) -> None:
        quarantine = self.directory / QUARANTINE_DIR
        for name in (LEDGER_FILE, SEALS_FILE, RUNS_FILE):
            recovery.quarantine_torn_tail(self.directory / name, quarantine)
        self._leaf_count = recovery.reconcile_index(self._index, self.jsonl_path)
        recovery.reconcile_tree(self._nodes, self._index, self.jsonl_path, self._leaf_count)
        self._last_seal = jsonl.last_line(self.directory / SEALS_FILE)

    def _refresh(self) -> None:
        """A reader catches up with the writer's leaves and seals; the writer knows them."""
        if self._lock_fd is None:
            self._leaf_count = self._index.count()
            self._last_seal = jsonl.last_line(self.directory / SEALS_FILE)

    def _tree(self, operation: Callable[..., T], *args: int) -> T:
        """Run a merkle function over the node files; a missing node means they need rebuilding."""
        try:
            return operation(*args, self._nodes)
        except LookupError as exc:
            raise IndexCorrupt(f"{exc} in {self.directory}; run `crovia reindex`") from None

    def _signer_for(self, key: nacl.signing.SigningKey) -> BatchSigner:
        if self._signer is None:
            self._signer = BatchSigner(key, self._helper())
        return self._signer

    def _helper(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-writer")
        return self._pool

    def _rows(self, signed: list[Signed], start: int) -> list[LeafRow]:
        offset, rows = os.fstat(self._jsonl_fd).st_size, []
        for leaf_index, (full, line, _digest) in enumerate(signed, start):
            rows.append(row_for(full, leaf_index, offset, len(line) - 1))
            offset += len(line)
        return rows

    def _stage(self, start: int, digests: list[bytes], rows: list[LeafRow]) -> None:
        for leaf_index, digest in enumerate(digests, start):
            merkle.append_leaf(self._nodes, leaf_index, digest)
        self._index.stage(rows)

    def _commit_when_durable(self, written: Future, count: int) -> None:
        """Wait for the lines; commit the staged views if they are durable, else forget them."""
        try:
            written.result()
        except BaseException as exc:
            wait([written])
            if written.exception() is None:  # interrupted while the lines became durable
                self._broken = exc
            else:  # the write failed and cut the file back: forget this batch's views too
                self._unstage(exc)
            raise
        try:
            self._index.commit()  # a reader in this or another process sees what issue() returns
            self._nodes.flush()
        except BaseException as exc:
            self._broken = exc
            raise
        self._leaf_count += count

    def _unstage(self, cause: BaseException) -> None:
        self._nodes.discard()
        try:
            self._index.rollback()
        except BaseException:
            self._broken = cause
            raise

    def _refuse_duplicates(self, axiom_ids: list[str]) -> None:
        if len(set(axiom_ids)) == len(axiom_ids):
            repeated = self._index.known(axiom_ids)
        else:
            repeated = {axiom_id for axiom_id, n in Counter(axiom_ids).items() if n > 1}
        if repeated:
            raise DuplicateAxiom(
                f"already in the ledger or twice in the batch (same envelope issued twice):"
                f" {sorted(repeated)[:3]}"
            )

    def _unsealed(self) -> int:
        return self._leaf_count - (self._last_seal["leaf_count"] if self._last_seal else 0)

    def _writer_key(self) -> nacl.signing.SigningKey:
        self._require_lock()
        if self._key is None:
            raise ReadOnlyLedger(f"{self.directory} was opened without a signing key: cannot sign")
        return self._key

    def _require_lock(self) -> None:
        if self._lock_fd is None:
            raise ReadOnlyLedger(f"{self.directory} was opened read-only (no writer lock)")
        if self._broken is not None:
            raise WriterFailed(
                f"an earlier write to {self.directory} failed ({self._broken!r});"
                " close and reopen the ledger to recover"
            )

    def _read_line(self, offset: int, length: int) -> bytes:
        with open(self.jsonl_path, "rb") as src:
            return os.pread(src.fileno(), length, offset)
