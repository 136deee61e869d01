"""The writer of a ledger directory: the lock, crash recovery, issue, seal and run records.

Opened with a signing key, a Ledger is the single writer (an exclusive lock, crash recovery on
open); without one it is a reader (`ledger.store.reader.LedgerReader`) that never writes. See
docs/ledger.md for the layout and the durability rules.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import nacl.signing

from ledger import jsonl, lock
from ledger.canonical import encode_checked
from ledger.exceptions import EmptyLedger, ReadOnlyLedger, RotationRefused, WriterFailed
from ledger.keys.rotation import build_rotation
from ledger.keys.signer import Signed
from ledger.seal import build_seal
from ledger.store import recovery
from ledger.store.appender import BatchAppender
from ledger.store.find_index import find_fields, rows_from_fields
from ledger.store.index import IndexEntry, LedgerIndex
from ledger.store.reader import (
    INDEX_FILE,
    LEDGER_FILE,
    LOCK_FILE,
    QUARANTINE_DIR,
    ROTATIONS_FILE,
    RUNS_FILE,
    SEALS_FILE,
    TREE_DIR,
    LedgerReader,
)
from ledger.store.tlog_store import CHECKPOINTS_PATH, CheckpointStore, log_origin, note_signer
from ledger.store.tree import FileNodeStore
from ledger.store.writer_key import check_writer_key

__all__ = ["LEDGER_FILE", "RUNS_FILE", "SEALS_FILE", "IndexEntry", "Issued", "Ledger"]


# At most this many find rows wait in memory for the next seal (a ledger sealed rarely or never).
_FIND_ROWS_HELD = 100_000


class Issued(NamedTuple):
    """One envelope made durable by `Ledger.issue`."""

    leaf_index: int
    axiom_id: str
    leaf_hash: str


class Ledger(LedgerReader):
    """One ledger directory. Use `Ledger.open(...)`, as a context manager."""

    def __init__(self, directory: Path, signing_key: nacl.signing.SigningKey | None) -> None:
        super().__init__(directory)
        self._key = signing_key
        self._seal_every: int | None = None
        self._appender: BatchAppender | None = None
        self._origin: str | None = None
        # What `crovia find`'s rows need of the leaves written since the last seal, read from the
        # envelopes as they are written, so the seal need not read and parse those lines again;
        # the seal makes the rows (hashes, title words) off the issuing path. None once more than
        # _FIND_ROWS_HELD leaves wait: the seal then reads their lines.
        self._find_rows: list[Any] | None = []

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        *,
        signing_key: nacl.signing.SigningKey | None = None,
        lock_timeout: float = 60.0,
        seal_every: int | None = None,
        writer: bool | None = None,
        log_origin: str | None = None,
    ) -> Ledger:
        """Open a ledger as the writer (with `signing_key`) or as a reader (without).

        The writer creates the directory, takes the lock (raises LedgerLocked after `lock_timeout`
        seconds) and runs crash recovery. It raises WrongSigningKey, having written nothing, when
        `signing_key` is not the ledger's current key (ledger/store/writer_key.py). A reader raises
        LedgerNotFound when there is no ledger. `writer=True` without a key opens for maintenance
        (`rebuild_index`): locked, but cannot sign. `log_origin` names the log in its checkpoints
        (default: the origin of the checkpoints already stored, else `crovia.local/<key_id>`);
        LogOriginChanged if it differs from theirs.
        """
        ledger = cls(Path(directory).absolute(), signing_key)
        ledger._seal_every = seal_every
        ledger._origin = log_origin
        try:
            if writer or (writer is None and signing_key is not None):
                if signing_key is not None:  # before the lock: a refused writer changes no byte
                    check_writer_key(ledger.directory, signing_key)
                ledger._open_writer(lock_timeout)
            else:
                ledger._open_reader()
        except BaseException:
            ledger.close()
            raise
        return ledger

    def close(self) -> None:
        """Release the lock and close files. Idempotent."""
        if self._appender is not None:
            self._appender.close()
            self._appender = None
        super().close()
        if self._lock_fd is not None:
            lock.release(self._lock_fd)
            self._lock_fd = None

    def issue(self, envelopes: Sequence[Mapping[str, Any]]) -> list[Issued]:
        """Sign and append unsigned envelopes; return once durable, with each leaf's position.

        Raises ReadOnlyLedger for a reader, CanonicalizationError for a float or other unsignable
        value, DuplicateAxiom for an envelope whose axiom_id is already in the ledger or the batch,
        EntryTooLarge for a line over 65,535 bytes (the limit of the published log's entry
        bundles): then nothing is written. With `seal_every=N` the batch is written in parts cut
        where N leaves are unsealed, each part fsynced and followed by its seal; if writing a later
        part fails, the earlier parts stay durable and sealed (and raise the error all the same).
        """
        key = self._writer_key()
        start = self._leaf_count
        appender = self._appender_for(key)
        signed = appender.prepare(list(envelopes), start)
        for part in self._seal_parts(signed):
            appender.write(part, self._leaf_count)
            if self._find_rows is not None:
                if len(self._find_rows) + len(part) > _FIND_ROWS_HELD:
                    self._find_rows = None
                else:
                    self._find_rows += [
                        (i, find_fields(full))
                        for i, (full, _, _) in enumerate(part, self._leaf_count)
                    ]
            self._leaf_count += len(part)
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
            self._checkpoint(key)
            return self._last_seal
        first = self._index.leaf(self._leaf_count - self._unsealed())
        last = self._index.leaf(self._leaf_count - 1)
        seal = build_seal(
            key=key,
            leaf_count=self._leaf_count,
            merkle_root=self.merkle_root(),
            jsonl_path=LEDGER_FILE,  # the basename: nothing signed names the operator's paths
            run_id=run_id or f"seal_{self._leaf_count}",
            first=(first.receipt_hash, first.run_hash),
            last=(last.receipt_hash, last.run_hash),
            prev_seal=self._last_seal,
            rfc6962_root=self.rfc6962_root(),
        )
        jsonl.append_to(self.directory / SEALS_FILE, encode_checked(seal) + b"\n")
        self._last_seal = seal
        self._checkpoint(key)
        held, self._find_rows = self._find_rows or [], []
        rows = [rows_from_fields(fields, leaf_index) for leaf_index, fields in held]
        self._index.catch_up_find(self.jsonl_path, rows)  # `crovia find` from the index: at a seal
        return seal

    def rotate_key(self, new_key: nacl.signing.SigningKey) -> dict[str, Any]:
        """Hand this ledger over to `new_key` and return the rotation record
        (ledger/keys/rotation.py).

        Seals first, with the current key, so every leaf it signed is sealed by it; then appends
        the record, signed by both keys, to rotations.jsonl durably (file and directory fsynced);
        from then on this writer signs with `new_key`. Raises RotationRefused when `new_key` is a
        key the ledger had before (the current one included).
        """
        key = self._writer_key()
        had = {bytes(key.verify_key).hex()} | {r["old_public_key_hex"] for r in self.rotations()}
        if bytes(new_key.verify_key).hex() in had:
            raise RotationRefused("the new key is one this ledger had before: nothing to rotate")
        if self._unsealed():
            self.seal(run_id=f"rotation_{self._leaf_count}")
        record = build_rotation(
            old_key=key, new_key=new_key, leaf_count=self._leaf_count, prev_seal=self._last_seal
        )
        created = not self._rotations.exists()
        jsonl.append_to(self._rotations, encode_checked(record) + b"\n")
        if created:
            jsonl.fsync_dir(self.directory)
        self._key = new_key
        if self._appender is not None:  # its signer holds the old key
            self._appender.close()
            self._appender = None
        return record

    def append_run(self, record: Mapping[str, Any]) -> None:
        """Append one run record to runs.jsonl, durably (fsync before returning).

        Encoded with the canonical rule of docs/format.md through the stdlib, so unsigned run
        statistics may hold floats; raises ValueError for NaN or infinity, TypeError for values
        JSON cannot hold.
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

    # -- internals ---------------------------------------------------------------------------------

    def _open_writer(self, lock_timeout: float) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = lock.acquire(self.directory / LOCK_FILE, lock_timeout)
        self.jsonl_path.touch()
        self._index = LedgerIndex(self.directory / INDEX_FILE, writable=True)
        self._nodes = FileNodeStore(self.directory / TREE_DIR, writable=True)
        self._recover()
        if self._key is not None:  # again under the lock: a rotation may have come meanwhile
            check_writer_key(self.directory, self._key)

    def _recover(self) -> None:
        quarantine = self.directory / QUARANTINE_DIR
        for name in (LEDGER_FILE, SEALS_FILE, RUNS_FILE, ROTATIONS_FILE, CHECKPOINTS_PATH):
            recovery.quarantine_torn_tail(self.directory / name, quarantine)
        self._find_rows = []
        self._leaf_count = recovery.reconcile_index(self._index, self.jsonl_path)
        recovery.reconcile_tree(self._nodes, self._index, self.jsonl_path, self._leaf_count)
        self._index.catch_up_find(self.jsonl_path)  # an index from before find's rows gains them
        self._last_seal = jsonl.last_line(self.directory / SEALS_FILE)
        if self._key is not None:
            self._checkpoint(self._key)

    def _checkpoint(self, key: nacl.signing.SigningKey) -> None:
        """Sign the newest seal's checkpoint unless stored: a crash between the two is repaired."""
        if self._last_seal is not None and "rfc6962_root" in self._last_seal:
            store = CheckpointStore(self.directory)  # unset, the origin stays the log's own
            origin = log_origin(self._origin or store.origin(), bytes(key.verify_key))
            store.ensure(self._last_seal, note_signer(key, origin))

    def _appender_for(self, key: nacl.signing.SigningKey) -> BatchAppender:
        if self._appender is None:
            self._appender = BatchAppender(self.jsonl_path, self._index, self._nodes, key)
        return self._appender

    def _seal_parts(self, signed: list[Signed]) -> list[list[Signed]]:
        """`signed` cut where the unsealed count reaches seal_every (one part without it)."""
        if not self._seal_every:
            return [signed]
        parts, at, room = [], 0, max(self._seal_every - self._unsealed(), 1)
        while at < len(signed):
            parts.append(signed[at : at + room])
            at, room = at + room, self._seal_every
        return parts

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
        broken = self._appender.broken if self._appender is not None else None
        if broken is not None:
            raise WriterFailed(
                f"an earlier write to {self.directory} failed ({broken!r});"
                " close and reopen the ledger to recover"
            )
