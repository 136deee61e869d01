"""`crovia audit`: show a whole ledger directory is whole, in one streaming pass.

Per line (ledger/audit/leaves.py, on a thread pool): canonical form, the envelope's shape, its
axiom_id, and its signature under the key of its era (ledger/audit/keys.py), plus any extra
per-leaf check plugged in. Across lines, here: the anchor height is the line number, no axiom_id
repeats, index.sqlite agrees row for row (ledger/audit/index.py), and every seal's signature, key
and Merkle root hold at its leaf_count (an O(log n) frontier). Leaves after the last seal are
reported and must verify under the ledger's key like the rest. The seal chain, the seals' RFC
6962 roots and the stored checkpoints are checked too (ledger/audit/tlog_audit.py).

Memory does not grow with the ledger: batches in flight and the frontier. A replayed axiom_id is
found through the index (its rows are checked equal to the lines, then one grouped pass over the
axiom_id index finds a key held twice: ledger/audit/index.py), and only leaves that have no row
yet (a writer's uncommitted batch) are held in memory.

One consistent snapshot (issue 19): the sizes of checkpoints.jsonl, seals.jsonl, rotations.jsonl
and the ledger are fixed when the audit starts, in that order, the reverse of the order a writer
appends them (leaves, then a seal, then its checkpoint), so every checkpoint seen has its seal and
every seal its leaves; what is appended during the audit is not read. docs/ledger.md, "Audit".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from ledger import jsonl, lock, merkle
from ledger.audit.index import IndexChecker
from ledger.audit.keys import AuditKeys, audit_keys
from ledger.audit.leaves import LeafCheck, LeafFacts, checked_lines
from ledger.audit.processes import PROCESS_MIN_BYTES, PassedBlock, checked_blocks
from ledger.audit.seals import SealChecker, parse_seals
from ledger.audit.tlog_audit import check_checkpoints
from ledger.exceptions import AnchorMismatch, DuplicateLeaf, LedgerNotFound
from ledger.keys.keyfile import parse_pin
from ledger.store.bodies import CitedBodies
from ledger.store.reader import INDEX_FILE, LEDGER_FILE, LOCK_FILE, ROTATIONS_FILE, SEALS_FILE
from ledger.store.tlog_store import CHECKPOINTS_PATH
from ledger.store.tree import MemoryFrontier

__all__ = ["AuditReport", "audit", "parse_seals"]


@dataclass(frozen=True)
class AuditReport:
    """What a passing audit checked, with counts."""

    leaves: int
    signatures_verified: int
    seals: int
    checkpoints: int
    unsealed_leaves: int
    public_key_hex: str | None
    key_ids: list[str]
    key_rotations: int
    key_pinned: bool
    index_rows_checked: int
    index_rows_pending: int
    seconds: float
    torn_tail: bool


def audit(
    directory: str | Path,
    *,
    pubkey_hex: str | None = None,
    workers: int = 2,
    progress: Callable[[int], None] | None = None,
    extra_checks: Sequence[LeafCheck] = (),
    processes: bool | None = None,
) -> AuditReport:
    """Check every leaf, seal and index row of the ledger at `directory`; return a report or raise.

    The envelopes' key is `pubkey_hex` if given (then every seal must carry it too, else
    UntrustedKey), else the first seal's key: without `pubkey_hex` (`key_pinned` False) a pass
    shows the ledger is consistent under the key its first seal names, not who signed it. With
    neither a seal nor `pubkey_hex`, nothing could be checked: NoAuditKey. `extra_checks` run on
    every envelope with its leaf index. The per-line checks run on `workers` threads, or on worker
    processes (ledger/audit/processes.py) for a ledger of PROCESS_MIN_BYTES or more (`processes`
    forces one way; caller extra_checks always run on threads). Raises InvalidPublicKey for a
    malformed `pubkey_hex`, LedgerNotFound when there is no ledger file, and the
    VerificationError of the first failure, its message naming the leaf index or seals.jsonl line.
    """
    pubkey_hex = parse_pin(pubkey_hex, None)[0]
    directory = Path(directory)
    ledger_file = directory / LEDGER_FILE
    if not ledger_file.exists():
        raise LedgerNotFound(f"no ledger at {directory}")
    started = time.monotonic()
    snapshot = Snapshot.take(directory)
    seals = parse_seals(list(jsonl.iter_lines(directory / SEALS_FILE, end=snapshot.seals)))
    keys = audit_keys(
        directory, pubkey_hex, seals, snapshot.ledger > 0, rotations_end=snapshot.rotations
    )
    index = IndexChecker(directory / INDEX_FILE)
    try:
        run = _Pass(ledger_file, keys, SealChecker(seals, keys), index)
        checked = _checked(
            ledger_file, keys, directory, workers, extra_checks, processes, snapshot.ledger
        )
        with closing(checked):  # a refusal stops the workers now, not when the frame is freed
            for batch in checked:
                run.add(batch)
                if progress is not None:
                    progress(run.leaves)
        run.seals.finish(run.leaves)
        run.finish_unique()
        plain_seals = [seal for _number, seal in seals]
        checkpoints = check_checkpoints(directory, plain_seals, snapshot.checkpoints)
        pending = index.finish(
            run.leaves,
            ledger_grew=jsonl.complete_size(ledger_file) > run.end,
            writer_active=lock.held(directory / LOCK_FILE),
        )
    finally:
        index.close()
    counts = (len(seals), checkpoints, pending)
    return _report(run, keys, counts, time.monotonic() - started, snapshot.torn_tail)


@dataclass(frozen=True)
class Snapshot:
    """The complete sizes (bytes up to the last newline) an audit reads, fixed when it starts."""

    checkpoints: int
    seals: int
    rotations: int
    ledger: int
    torn_tail: bool  # the ledger file had bytes after its last newline

    @classmethod
    def take(cls, directory: Path) -> Snapshot:
        """Sizes read in the reverse of a writer's order of appends (see the module's doc)."""
        checkpoints = jsonl.complete_size_or_zero(directory / CHECKPOINTS_PATH)
        seals = jsonl.complete_size_or_zero(directory / SEALS_FILE)
        rotations = jsonl.complete_size_or_zero(directory / ROTATIONS_FILE)
        with open(directory / LEDGER_FILE, "rb") as handle:
            ledger = jsonl.last_line_end(handle)
            torn = handle.seek(0, 2) != ledger
        return cls(checkpoints, seals, rotations, ledger, torn)


def _checked(
    ledger_file: Path,
    keys: AuditKeys,
    directory: Path,
    workers: int,
    extra_checks: Sequence[LeafCheck],
    processes: bool | None,
    end: int,
) -> Iterator[PassedBlock | list[LeafFacts]]:
    """Each line's facts, or a block that passed (ledger/audit/processes.py), within the first
    `end` bytes, in order, from worker processes or threads (see `audit`)."""
    if processes is None:
        processes = end >= PROCESS_MIN_BYTES
    if processes and workers > 1 and not extra_checks:
        yield from checked_blocks(ledger_file, keys, directory, workers, end)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        checks = [CitedBodies(directory), *extra_checks]
        yield from checked_lines(pool, ledger_file, keys, checks, workers, end)


class _Pass:
    """The whole-ledger checks, fed the leaves' facts in order."""

    def __init__(
        self, ledger_file: Path, keys: AuditKeys, seals: SealChecker, index: IndexChecker
    ) -> None:
        self.ledger_file, self.keys, self.seals, self.index = ledger_file, keys, seals, index
        self.frontier = MemoryFrontier()
        self.leaves = 0
        self.end = 0  # bytes of the ledger file audited
        self._unindexed: dict[bytes, int] = {}  # leaves without an index row yet: digest -> leaf

    def add(self, batch: PassedBlock | list[LeafFacts]) -> None:
        if isinstance(batch, PassedBlock):
            self._add_passed(batch)
            return
        first = self.leaves
        # A batch whose heights are its line numbers and whose index rows are all there and equal
        # is checked in two comparisons; any other is checked leaf by leaf, which finds and names
        # the first failure in the order it always has.
        heights_ok = [facts.height for facts in batch] == list(range(first, first + len(batch)))
        rows_ok = heights_ok and self.index.check_run(first, [f.index_row for f in batch])
        for facts in batch:
            leaf = self.leaves
            if not rows_ok:
                self._check_leaf(leaf, facts)
            merkle.append_leaf(self.frontier, leaf, facts.leaf_hash)
            self.leaves += 1
            self.end = facts.end
            self.seals.at(self.leaves, self.frontier)

    def _add_passed(self, block: PassedBlock) -> None:
        """A block whose heights and index rows a worker checked: only the tree and seals."""
        hashes = block.leaf_hashes
        self.index.passed(block.first, len(hashes) // 32)
        frontier, seals, leaf = self.frontier, self.seals, self.leaves
        for at in range(0, len(hashes), 32):
            merkle.append_leaf(frontier, leaf, hashes[at : at + 32])
            leaf += 1
            seals.at(leaf, frontier)
        self.leaves = leaf
        self.end = block.end

    def _check_leaf(self, leaf: int, facts: LeafFacts) -> None:
        if not self.index.has_row(leaf):  # else its row is checked, and repeats found there
            self._unique_unindexed(facts.axiom_digest, leaf)
        if facts.height != leaf:
            raise AnchorMismatch(
                f"leaf {leaf}: envelope.anchors[0].height is the line number",
                expected=leaf,
                computed=facts.height,
            )
        self.index.check(leaf, facts.index_row)

    def finish_unique(self) -> None:
        """After the pass: no axiom_id repeats among the indexed leaves (DuplicateLeaf)."""
        repeat = self.index.first_repeat(self.leaves)
        if repeat is not None:
            first, leaf, axiom_id = repeat
            _duplicate(axiom_id, first, leaf)

    def _unique_unindexed(self, digest: bytes, leaf: int) -> None:
        axiom_id = "axm_" + digest.hex()
        first = self._unindexed.get(digest)
        if first is None:
            first = self.index.first_with(axiom_id, leaf)
        if first is None:
            self._unindexed[digest] = leaf
            return
        _duplicate(axiom_id, first, leaf)


def _duplicate(axiom_id: str, first: int, leaf: int) -> None:
    raise DuplicateLeaf(
        f"leaf {leaf} repeats the axiom_id of leaf {first} (a replayed line)",
        expected=f"one leaf with {axiom_id}",
        computed=[first, leaf],
    )


def _report(
    run: _Pass, keys: AuditKeys, counts: tuple[int, int, int], seconds: float, torn: bool
) -> AuditReport:
    seals, checkpoints, pending = counts
    sealed = run.seals.last_count
    return AuditReport(
        leaves=run.leaves,
        signatures_verified=run.leaves,
        seals=seals,
        checkpoints=checkpoints,
        unsealed_leaves=run.leaves - sealed,
        public_key_hex=keys.eras[-1].public_key_hex if keys.eras else None,
        key_ids=keys.key_ids,
        key_rotations=keys.rotations,
        key_pinned=keys.pinned,
        index_rows_checked=run.index.checked,
        index_rows_pending=pending,
        seconds=seconds,
        torn_tail=torn,
    )
