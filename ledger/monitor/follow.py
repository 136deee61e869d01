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
    VerificationError,
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
from ledger.tlog.tile_tree import StreamedTree, TileHashes, fold

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
    try:
        checkpoint, note = open_log_checkpoint(source.get("checkpoint", MAX_CHECKPOINT), keys)
    except VerificationError as exc:
        if exc.args[0].startswith("checkpoint"):
            raise
        raise type(exc)(
            f"checkpoint: {exc.args[0]}", expected=exc.expected, computed=exc.computed
        ) from None
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
) -> StreamedTree:
    """The tree at the checkpoint's size, grown from verified entries as they stream in: each
    level-0 tile checked as its entries are, every other changed tile, the root and the
    consistency with the old root checked. Memory does not grow with the increment but by 32
    bytes per 256 entries (issue 19)."""
    start = state.size // tiles.TILE_WIDTH * tiles.TILE_WIDTH
    below = TileHashes(checkpoint.size, lambda tile: _fetch_tile(source, tile))
    sizes = _Sizes(state.size, checkpoint.size)
    tops, partial = _stream_entries(source, keys, sizes, workers)
    tree = StreamedTree(start, checkpoint.size, tops, partial, below, sizes.changed)
    for tile in tiles.changed_tiles(state.size, checkpoint.size):
        if tile.level:  # level 0 was checked while streaming
            _check_tile(tile, below.tile_hashes(tile), tree, sizes)
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


@dataclass(frozen=True)
class _Sizes:
    """The sizes a run checks between, for its messages."""

    old: int
    new: int

    def __str__(self) -> str:
        return f"checking from size {self.old} to size {self.new}"

    def changed(self, tile: tiles.Tile) -> TileMalformed:
        return TileMalformed(f"{tile.path} ({_leaves(tile)}) changed between two reads, {self}")


def _leaves(tile: tiles.Tile) -> str:
    """The leaves a tile's hashes cover, `leaves A-B`."""
    span = 1 << (tiles.TILE_HEIGHT * tile.level)
    return f"leaves {tile.start * span}-{(tile.start + tile.width) * span - 1}"


def _check_consistency(state: MonitorState, checkpoint: Checkpoint, tree: StreamedTree) -> None:
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


def _check_tile(
    tile: tiles.Tile, published: Sequence[bytes], tree: StreamedTree, sizes: _Sizes
) -> None:
    """Every hash of `tile` (above level 0) must be what the verified tree holds there."""
    span = 1 << (tiles.TILE_HEIGHT * tile.level)
    for offset, digest in enumerate(published):
        recomputed = tree.node(tiles.TILE_HEIGHT * tile.level, tile.start + offset)
        if digest != recomputed:
            raise _tile_mismatch(tile, offset, span, recomputed, digest, sizes)


def _tile_mismatch(
    tile: tiles.Tile, offset: int, span: int, recomputed: bytes, digest: bytes, sizes: _Sizes
) -> TileMalformed:
    first = (tile.start + offset) * span
    what = f"leaf {first}" if span == 1 else f"leaves {first}-{first + span - 1}"
    return TileMalformed(
        f"{tile.path} ({_leaves(tile)}) hash {offset} ({what}) is not what the entries hash"
        f" to, {sizes}",
        expected=recomputed.hex(),
        computed=digest.hex(),
    )


def _check_leaf_tile(
    source: LogSource, tile: tiles.Tile, recomputed: list[bytes], sizes: _Sizes
) -> None:
    published = tiles.decode_hashes(_fetch_tile(source, tile), tile)
    for offset, (digest, mine) in enumerate(zip(published, recomputed, strict=True)):
        if digest != mine:
            raise _tile_mismatch(tile, offset, 1, mine, digest, sizes)


def _stream_entries(
    source: LogSource, keys: LogKeys, sizes: _Sizes, workers: int
) -> tuple[list[bytes], list[bytes]]:
    """Check the entries of the bundles from the one holding leaf `sizes.old` to leaf
    `sizes.new` (each from `sizes.old` on in full; bundles on `workers` threads, a few ahead),
    and each level-0 tile against their leaf hashes as they come. Returns the roots of the full
    level-0 tiles and the leaf hashes of the partial one at the end (if any): nothing else is
    kept."""
    tops: list[bytes] = []
    partial: list[bytes] = []
    pending: deque[tuple[tiles.Tile, Future[list[bytes]]]] = deque()

    def settle() -> None:
        nonlocal partial
        tile, future = pending.popleft()
        hashes = future.result()
        _check_leaf_tile(source, tile, hashes, sizes)
        if tile.width == tiles.TILE_WIDTH:
            tops.append(fold(hashes))
        else:
            partial = hashes

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for index in range(sizes.old // tiles.TILE_WIDTH, -(-sizes.new // tiles.TILE_WIDTH)):
            tile = tiles.tile_for(0, index, sizes.new)
            entries = tiles.decode_bundle(_fetch(source, tile.entries_path, MAX_BUNDLE), tile)
            pending.append((tile, pool.submit(check_entries, entries, tile.start, sizes.old, keys)))
            while len(pending) > 2 * workers:
                settle()
        while pending:
            settle()
    return tops, partial


def _fetch_tile(source: LogSource, tile: tiles.Tile) -> bytes:
    return _fetch(source, tile.path, MAX_TILE)


def _fetch(source: LogSource, path: str, limit: int) -> bytes:
    """A tile or bundle the checkpoint requires; its absence is the log's failure (exit 1)."""
    try:
        return source.get(path, limit)
    except NotPublished:
        raise TileMalformed(f"{path} is required by the checkpoint but not published") from None
