"""Appending one signed batch: durable lines first, then the index rows and Merkle nodes.

The batch is signed (on two threads when large), checked for duplicate ids, and then a helper
thread writes and fsyncs its lines while the caller's thread stages the index rows (an open SQLite
transaction) and Merkle nodes (in memory): the fsync waits on the disk, the staging is CPU work.
Both are committed only once the lines are durable. docs/ledger.md, "Durability".
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import nacl.signing

from ledger import jsonl, merkle
from ledger.exceptions import DuplicateAxiom
from ledger.keys.signer import BatchSigner, Signed
from ledger.store.index import LeafRow, LedgerIndex, row_for
from ledger.store.tree import FileNodeStore
from ledger.tlog.tiles import check_entry_size


class BatchAppender:
    """The writer's append path over its index and node store; owns the JSONL fd and a thread.

    After a failure that leaves the lines durable but the index or nodes behind them, `broken`
    holds the error: only reopening the ledger (crash recovery) can mend that.
    """

    def __init__(
        self,
        jsonl_path: Path,
        index: LedgerIndex,
        nodes: FileNodeStore,
        key: nacl.signing.SigningKey,
    ) -> None:
        self._index = index
        self._nodes = nodes
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-writer")
        self._signer = BatchSigner(key, self._pool)
        self._fd = os.open(jsonl_path, os.O_WRONLY | os.O_APPEND)
        self.broken: BaseException | None = None

    def close(self) -> None:
        self._pool.shutdown()
        os.close(self._fd)

    def append(self, envelopes: Sequence[Mapping[str, Any]], start: int) -> list[Signed]:
        """`prepare` then `write` in one go; returns the signed leaves."""
        signed = self.prepare(envelopes, start)
        self.write(signed, start)
        return signed

    def prepare(self, envelopes: Sequence[Mapping[str, Any]], start: int) -> list[Signed]:
        """Sign `envelopes` as leaves `start`... and check them; nothing is written.

        Raises CanonicalizationError, DuplicateAxiom for an id already in the ledger or twice in
        the batch, or EntryTooLarge for a line no entry bundle of the published log can hold. The
        caller may then `write` the result in consecutive parts.
        """
        signed = self._signer.sign(envelopes, start)
        for leaf_index, (_full, line, _digest) in enumerate(signed, start):
            # every line must fit the published log's entry bundles (docs/ledger.md, "Tiles")
            check_entry_size(memoryview(line)[:-1], leaf_index)
        if signed:
            _refuse_duplicates(self._index, [full["axiom_id"] for full, _line, _digest in signed])
        return signed

    def write(self, signed: list[Signed], start: int) -> None:
        """Append prepared leaves (the first is leaf `start`); return once durable and indexed.

        Raises the OSError of a failed write (the file is cut back and nothing staged is kept).
        """
        if not signed:
            return
        rows = self._rows(signed, start)
        lines = [line for _full, line, _digest in signed]
        written = self._pool.submit(jsonl.append_durably, self._fd, lines)
        try:
            self._stage(start, [digest for _full, _line, digest in signed], rows)
        except BaseException as exc:
            wait([written])
            self.broken = exc  # the lines may be durable while the views are not
            raise
        self._commit_when_durable(written)

    def _rows(self, signed: list[Signed], start: int) -> list[LeafRow]:
        offset, rows = os.fstat(self._fd).st_size, []
        for leaf_index, (full, line, _digest) in enumerate(signed, start):
            rows.append(row_for(full, leaf_index, offset, len(line) - 1))
            offset += len(line)
        return rows

    def _stage(self, start: int, digests: list[bytes], rows: list[LeafRow]) -> None:
        for leaf_index, digest in enumerate(digests, start):
            merkle.append_leaf(self._nodes, leaf_index, digest)
        self._index.stage(rows)

    def _commit_when_durable(self, written: Future) -> None:
        """Wait for the lines; commit the staged views if they are durable, else forget them."""
        try:
            written.result()
        except BaseException as exc:
            wait([written])
            if written.exception() is None:  # interrupted while the lines became durable
                self.broken = exc
            else:  # the write failed and cut the file back: forget this batch's views too
                self._unstage(exc)
            raise
        try:
            self._index.commit()  # a reader in this or another process sees what issue() returns
            self._nodes.flush()
        except BaseException as exc:
            self.broken = exc
            raise

    def _unstage(self, cause: BaseException) -> None:
        self._nodes.discard()
        try:
            self._index.rollback()
        except BaseException:
            self.broken = cause
            raise


def _refuse_duplicates(index: LedgerIndex, axiom_ids: list[str]) -> None:
    if len(set(axiom_ids)) == len(axiom_ids):
        repeated = index.known(axiom_ids)
    else:
        repeated = {axiom_id for axiom_id, n in Counter(axiom_ids).items() if n > 1}
    if repeated:
        raise DuplicateAxiom(
            f"already in the ledger or twice in the batch (same envelope issued twice):"
            f" {sorted(repeated)[:3]}"
        )
