"""Reading a ledger directory: lookups, envelopes, seals, runs, receipts, roots and stats.

`LedgerReader` holds what readers and the writer share; `ledger.store.Ledger` adds the writer (the
lock, recovery, issue, seal). A reader never writes: it reads the index and node files the writer
keeps and looks again for new leaves and seals each time it is asked.

Layout (docs/ledger.md): axiom_ledger.jsonl (line n = leaf n), seals.jsonl, runs.jsonl,
rotations.jsonl, index.sqlite, tree/level-KK.bin, ledger.lock, quarantine/, bodies/
(ledger/store/bodies.py).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Self, TypeVar

import orjson

from ledger import jsonl, merkle
from ledger.exceptions import EmptyLedger, IndexCorrupt, LedgerNotFound, NotSealed, UnknownAxiom
from ledger.receipt.build import build_receipt
from ledger.records.capture import PAGE_TARGET_PREFIX
from ledger.records.coverage import COVERAGE_TARGET_PREFIX
from ledger.records.fetch import FEED_TARGET_PREFIX
from ledger.store.index import IndexEntry, LedgerIndex, Versions
from ledger.store.tree import FileNodeStore
from ledger.tlog import rfc6962

LEDGER_FILE = "axiom_ledger.jsonl"
SEALS_FILE = "seals.jsonl"
RUNS_FILE = "runs.jsonl"
ROTATIONS_FILE = "rotations.jsonl"
INDEX_FILE = "index.sqlite"
TREE_DIR = "tree"
LOCK_FILE = "ledger.lock"
QUARANTINE_DIR = "quarantine"
T = TypeVar("T")


class LedgerReader:
    """The read side of one ledger directory; open it with `ledger.store.Ledger.open`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.jsonl_path = directory / LEDGER_FILE
        self._rotations = directory / ROTATIONS_FILE
        self._lock_fd: int | None = None
        self._index: LedgerIndex | None = None
        self._nodes: FileNodeStore | None = None
        self._leaf_count = 0
        self._last_seal: dict[str, Any] | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the index and node files. Idempotent."""
        for resource in (self._index, self._nodes):
            if resource is not None:
                resource.close()
        self._index = self._nodes = None

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

    def versions(self, identity: str, fingerprint: str) -> Versions:
        """What the ledger holds of `identity` (a digest, ledger.store.index.identity_of): its
        newest leaf, and its newest leaf whose fingerprint is `fingerprint` (an index lookup)."""
        return self._index.versions(identity, fingerprint)

    def envelope(self, leaf_index: int) -> dict[str, Any]:
        """The full envelope at `leaf_index`. Raises UnknownAxiom when there is no such leaf."""
        row = self._index.leaf(leaf_index) if leaf_index < self._leaf_count else None
        if row is None:
            raise UnknownAxiom(f"no leaf {leaf_index} (the ledger has {self._leaf_count})")
        return orjson.loads(self._read_line(row.offset, row.length))

    def envelope_of(self, axiom_id: str) -> dict[str, Any]:
        """The full envelope with this axiom_id. Raises UnknownAxiom when there is none."""
        self._refresh()
        row = self._index.by_axiom(axiom_id)
        if row is None or row.leaf_index >= self._leaf_count:
            raise UnknownAxiom(f"{axiom_id} is not in the ledger at {self.directory}")
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
        """The crovia.axiom_proof.v1 receipt binding `axiom_id` to the newest seal covering it,
        with the stamps kept for that seal (ledger/stamps/anchor.py).

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
        return self.receipt_at(row.leaf_index, seal)

    def receipt_at(self, leaf_index: int, seal: dict[str, Any]) -> dict[str, Any]:
        """The receipt binding leaf `leaf_index` to `seal`, one of this ledger's seals covering it.

        Older receipts stay valid after later seals, so a publisher can bind each leaf to the first
        seal that covers it and never rewrite it. Raises IndexCorrupt for a leaf the index lacks.
        """
        return next(self.receipts_at(seal, [leaf_index]))

    def receipts_at(
        self, seal: dict[str, Any], leaf_indexes: Iterable[int]
    ) -> Iterator[dict[str, Any]]:
        """`receipt_at` for each of `leaf_indexes` under one `seal`: the seal's key rotations and
        stamps, the same for all of them, are read once."""
        rotations = self._rotations_to(seal["public_key_hex"])
        # Imported here: the OpenTimestamps stack costs a fifth of a second to import, which
        # every reader of the ledger (audit, stats, find) would pay without making receipts.
        from ledger.stamps.anchor import stamp_fields

        stamps = stamp_fields(seal, self.directory)  # what exists of the seal's stamps
        # Consecutive leaves share the seal's right edge and most of their paths: each node is
        # read once (publishing 1M receipts read 44 nodes a leaf), and the JSONL is opened once.
        nodes = _NodeCache(self._nodes)
        with open(self.jsonl_path, "rb") as ledger_file:
            for leaf_index in leaf_indexes:
                row = self._index.leaf(leaf_index)
                if row is None or seal["leaf_count"] <= leaf_index:
                    raise IndexCorrupt(
                        f"leaf {leaf_index} is not under a seal of {seal['leaf_count']}"
                    )
                line = os.pread(ledger_file.fileno(), row.length, row.offset)
                path = self._tree(merkle.inclusion_path, leaf_index, seal["leaf_count"], nodes)
                receipt = build_receipt(
                    envelope=orjson.loads(line),
                    leaf_index=leaf_index,
                    leaf_hash=merkle.leaf_hash(line),
                    ledger_path=LEDGER_FILE,  # the basename: nothing signed names a local path
                    path=path,
                    seal=seal,
                    key_rotations=copy.deepcopy(rotations),
                )
                receipt.update(copy.deepcopy(stamps))
                yield receipt

    def rotations(self) -> list[dict[str, Any]]:
        """Every key rotation record, oldest first (a torn last line is skipped)."""
        return [orjson.loads(line) for _offset, line in jsonl.iter_lines(self._rotations)]

    def _rotations_to(self, public_key_hex: str) -> list[dict[str, Any]]:
        """The rotation records from the ledger's first key to `public_key_hex` (none if none)."""
        records = self.rotations()
        keys = [r["new_public_key_hex"] for r in records]
        return records[: keys.index(public_key_hex) + 1] if public_key_hex in keys else []

    def merkle_root(self, leaf_count: int | None = None) -> bytes:
        """The root over the first `leaf_count` leaves (default all). Raises EmptyLedger for 0."""
        leaf_count = self._leaf_count if leaf_count is None else leaf_count
        if leaf_count < 1:
            raise EmptyLedger("the ledger has no leaves")
        return self._tree(merkle.root, leaf_count)

    def rfc6962_root(self, size: int | None = None) -> bytes:
        """The RFC 6962 root of the first `size` leaves (default all; the empty tree's for 0)."""
        return self._tree(rfc6962.root_at, self._leaf_count if size is None else size)

    def rfc6962_inclusion(self, leaf_index: int, size: int) -> list[bytes]:
        """The RFC 9162 inclusion proof of a leaf in the tree of `size` leaves (ValueError if
        none)."""
        return self._tree(rfc6962.inclusion_proof, leaf_index, size)

    def rfc6962_consistency(self, old_size: int, new_size: int) -> list[bytes]:
        """The RFC 9162 consistency proof between two sizes, 0 < old_size <= new_size <= leaves."""
        if new_size > self.leaf_count:
            raise ValueError(f"the ledger has {self._leaf_count} leaves, not {new_size}")
        return self._tree(rfc6962.consistency_proof, old_size, new_size)

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
            "vendors": self._index.vendor_counts(),  # items; the other records' counts below
            "fetch_records": self._index.target_count(FEED_TARGET_PREFIX),
            "page_captures": self._index.target_count(PAGE_TARGET_PREFIX),
            "coverage_records": self._index.target_count(COVERAGE_TARGET_PREFIX),
            "runs": sum(1 for _ in jsonl.iter_lines(self.directory / RUNS_FILE)),
        }

    def _open_reader(self) -> None:
        if not (self.directory / INDEX_FILE).exists():
            raise LedgerNotFound(
                f"no ledger at {self.directory} (or no index: run `crovia reindex` as the writer)"
            )
        self._index = LedgerIndex(self.directory / INDEX_FILE, writable=False)
        self._nodes = FileNodeStore(self.directory / TREE_DIR, writable=False)
        self._leaf_count = self._index.count()
        self._last_seal = jsonl.last_line(self.directory / SEALS_FILE)

    def _refresh(self) -> None:
        """A reader catches up with the writer's leaves and seals; the writer knows them."""
        if self._lock_fd is None:
            self._leaf_count = self._index.count()
            self._last_seal = jsonl.last_line(self.directory / SEALS_FILE)

    def _tree(self, operation: Callable[..., T], *args: Any) -> T:
        """Run a merkle function over the node files (or the last argument, a cache of them); a
        missing node means they need rebuilding."""
        if not args or not isinstance(args[-1], _NodeCache):
            args = (*args, self._nodes)
        try:
            return operation(*args)
        except LookupError as exc:
            raise IndexCorrupt(f"{exc} in {self.directory}; run `crovia reindex`") from None

    def _read_line(self, offset: int, length: int) -> bytes:
        with open(self.jsonl_path, "rb") as src:
            return os.pread(src.fileno(), length, offset)


class _NodeCache:
    """The tree's nodes, each read once while it is in use (a bounded number kept)."""

    LIMIT = 1 << 16

    def __init__(self, nodes: FileNodeStore) -> None:
        self._nodes = nodes
        self._kept: dict[tuple[int, int], bytes] = {}

    def node(self, level: int, index: int) -> bytes:
        digest = self._kept.get((level, index))
        if digest is None:
            if len(self._kept) >= self.LIMIT:
                self._kept.clear()
            digest = self._kept[(level, index)] = self._nodes.node(level, index)
        return digest
