"""`crovia monitor`: check a published log (ledger/publish/publisher.py) without trusting it.

From the last tree head it verified (size M, root R_M; ledger/monitor/state.py) to the checkpoint
now published (size N, root R_N), a run:
1. reads the signed key rotations (`rotations.json`; ledger/monitor/keys.py), checking each
   before trusting a key it names, and verifies the checkpoint's signature under the key of its
   size's era (the pinned key or one a hand-over leads to), and the quorum of witness
   cosignatures if asked;
2. refuses a smaller N (rollback), or at N = M another root (fork);
3. reads every entry bundle from the tile holding leaf M on, checks each new entry in full
   (ledger/monitor/entries.py) and hashes it;
4. grows the tree from those leaf hashes over the hash tiles of the old part (ledger/tlog/
   tile_tree.py), and requires every tile the growth changed to hold exactly the recomputed
   hashes, the root at N to be R_N, and a consistency proof made from that tree to join R_M to
   R_N (a fork or a rewritten past fails here);
5. checks each new seal (`seals/<n>`): its signature and key, its chain to the previous seal, its
   duplicate_last `merkle_root` and its `rfc6962_root` against the verified tree, up to the seal
   at N.
Only then does the caller save the new state. Nothing the log says about itself (sizes, roots,
proofs, its own audit) is taken on trust. The source is injected (ledger/monitor/log_source.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from ledger.exceptions import (
    LedgerError,
    LogForked,
    LogRolledBack,
    NotPublished,
    QuorumNotMet,
    TileMalformed,
)
from ledger.monitor.entries import check_entries
from ledger.monitor.keys import LogKeys, log_keys, open_log_checkpoint
from ledger.monitor.log_source import LogSource
from ledger.monitor.seals import SealWalk
from ledger.monitor.state import MonitorState
from ledger.tlog import tiles
from ledger.tlog.checkpoint import Checkpoint
from ledger.tlog.cosignature import CosignatureVerifier
from ledger.tlog.exceptions import ConsistencyProofInvalid
from ledger.tlog.note import Ed25519Verifier, Note, verify_note
from ledger.tlog.rfc6962 import consistency_proof, root_at, verify_consistency
from ledger.tlog.tile_tree import GrownTree, TileHashes

MAX_CHECKPOINT = 1 << 20
MAX_TILE = tiles.TILE_WIDTH * tiles.HASH_SIZE
MAX_BUNDLE = tiles.TILE_WIDTH * (2 + tiles.MAX_ENTRY)


@dataclass(frozen=True)
class MonitorReport:
    """A run that verified everything."""

    previous_size: int
    size: int
    seals: int
    cosigners: tuple[str, ...]

    @property
    def entries(self) -> int:
        return self.size - self.previous_size


def monitor(
    source: LogSource,
    log_vkey: str,
    state: MonitorState,
    *,
    witnesses: Sequence[str] = (),
    quorum: int = 0,
    workers: int = 2,
) -> tuple[MonitorReport, MonitorState]:
    """Verify what `source` published since `state`; return the report and the new state.

    Raises TlogKeyError for a malformed vkey, LedgerError for a quorum above the witnesses given
    or an unreadable source, and the VerificationError of the first failed check (exit 1).
    """
    log = Ed25519Verifier.from_vkey(log_vkey)
    cosigners = [CosignatureVerifier.from_vkey(vkey) for vkey in witnesses]
    if quorum > len(cosigners):
        raise LedgerError(f"a quorum of {quorum} needs at least {quorum} --witness keys")
    keys = log_keys(source, log)  # the pinned key and the signed hand-overs from it
    checkpoint, note = open_log_checkpoint(source.get("checkpoint", MAX_CHECKPOINT), keys)
    signed = _check_quorum(note, cosigners, quorum)
    if checkpoint.size < state.size:
        raise LogRolledBack(
            f"the log is at size {checkpoint.size}, smaller than size {state.size} seen before",
            expected=f">= {state.size}",
            computed=checkpoint.size,
        )
    if checkpoint.size == state.size:
        _check_same_root(state, checkpoint)
        return MonitorReport(state.size, state.size, 0, signed), state
    tree = _verified_tree(source, keys, state, checkpoint, workers)
    walk = SealWalk(source, keys, state, checkpoint, tree)
    new_state = walk.run()
    return MonitorReport(state.size, checkpoint.size, walk.checked, signed), new_state


def _check_quorum(
    note: Note, cosigners: Sequence[CosignatureVerifier], quorum: int
) -> tuple[str, ...]:
    """The witnesses whose cosignature verified; QuorumNotMet if fewer than `quorum`."""
    known = {(c.name, c.key_hash) for c in cosigners}
    present = any((sig.name, sig.key_hash) in known for sig in note.signatures)
    # verify_note checks every known witness's line (one that fails fails the note)
    names = tuple(sorted(set(verify_note(note, cosigners)))) if present else ()
    if len(names) < quorum:
        raise QuorumNotMet(
            f"the checkpoint has {len(names)} valid witness cosignature(s), {quorum} required",
            expected=quorum,
            computed=list(names),
        )
    return names


def _check_same_root(state: MonitorState, checkpoint: Checkpoint) -> None:
    if checkpoint.root != state.root:
        raise LogForked(
            f"two roots for size {state.size}: the log forked or rewrote its history",
            expected=state.root.hex(),
            computed=checkpoint.root.hex(),
        )


def _verified_tree(
    source: LogSource,
    keys: LogKeys,
    state: MonitorState,
    checkpoint: Checkpoint,
    workers: int,
) -> GrownTree:
    """The tree at the checkpoint's size, grown from verified entries; every changed tile, the
    root and the consistency with the old root checked."""
    start = state.size // tiles.TILE_WIDTH * tiles.TILE_WIDTH
    leaves = _entry_hashes(source, keys, state.size, checkpoint.size, workers)
    below = TileHashes(checkpoint.size, lambda tile: _fetch_tile(source, tile))
    tree = GrownTree(start, leaves, below)
    for tile in tiles.changed_tiles(state.size, checkpoint.size):
        _check_tile(tile, below.tile_hashes(tile), tree)
    computed = root_at(checkpoint.size, tree)
    if computed != checkpoint.root:
        raise TileMalformed(
            f"the published tiles and entries hash to another root at size {checkpoint.size}"
            " than the signed checkpoint",
            expected=checkpoint.root.hex(),
            computed=computed.hex(),
        )
    if state.size:
        _check_consistency(state, checkpoint, tree)
    return tree


def _check_consistency(state: MonitorState, checkpoint: Checkpoint, tree: GrownTree) -> None:
    proof = consistency_proof(state.size, checkpoint.size, tree)
    try:
        verify_consistency(state.size, checkpoint.size, state.root, checkpoint.root, proof)
    except ConsistencyProofInvalid:
        raise LogForked(
            f"the log at size {checkpoint.size} does not extend size {state.size} seen before:"
            " a fork, or a rewritten history",
            expected=state.root.hex(),
            computed=root_at(state.size, tree).hex(),
        ) from None


def _check_tile(tile: tiles.Tile, published: list[bytes], tree: GrownTree) -> None:
    for offset, digest in enumerate(published):
        recomputed = tree.node(tiles.TILE_HEIGHT * tile.level, tile.start + offset)
        if digest != recomputed:
            raise TileMalformed(
                f"{tile.path} hash {offset} is not what the entries hash to",
                expected=recomputed.hex(),
                computed=digest.hex(),
            )


def _entry_hashes(
    source: LogSource, keys: LogKeys, old: int, new: int, workers: int
) -> list[bytes]:
    """Leaf hashes of every entry in the bundles from the one holding leaf `old` to leaf `new`,
    each from `old` on checked in full (under the key of its era); bundles are checked on
    `workers` threads, a few ahead."""
    hashes: list[bytes] = []
    pending: deque[Future[list[bytes]]] = deque()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for index in range(old // tiles.TILE_WIDTH, -(-new // tiles.TILE_WIDTH)):
            tile = tiles.tile_for(0, index, new)
            entries = tiles.decode_bundle(_fetch(source, tile.entries_path, MAX_BUNDLE), tile)
            pending.append(pool.submit(check_entries, entries, tile.start, old, keys))
            while len(pending) > 2 * workers:
                hashes += pending.popleft().result()
        while pending:
            hashes += pending.popleft().result()
    return hashes


def _fetch_tile(source: LogSource, tile: tiles.Tile) -> bytes:
    return _fetch(source, tile.path, MAX_TILE)


def _fetch(source: LogSource, path: str, limit: int) -> bytes:
    """A tile or bundle the checkpoint requires; its absence is the log's failure (exit 1)."""
    try:
        return source.get(path, limit)
    except NotPublished:
        raise TileMalformed(f"{path} is required by the checkpoint but not published") from None
