"""`crovia publish`: the ledger as a static C2SP tlog-tiles log in a directory.

Layout (docs/ledger.md, "Publishing"): `checkpoint` (the newest seal's signed checkpoint, plus any
witness cosignatures), `rotations.json` (the signed key rotations, docs/format.md), hash tiles
`tile/<L>/<N>[.p/<W>]`, entry bundles `tile/entries/<N>[.p/<W>]`
(each entry one ledger line without its newline), and `seals/<N>` (seal number N, 0-based, as
its seals.jsonl line without the newline, N in tile path form), so a monitor can check every
seal's roots against the leaves. Everything is published up to the newest seal that has a
checkpoint, never further.

Incremental: only the tiles, bundles and seals that changed since the published checkpoint are
written, each atomically (ledger/publish/publish_dir.py), then one sync of the file system, and
the checkpoint last, so a reader always sees a complete log at the size its checkpoint names;
after a crash the next publish writes the same objects again. Further writers (receipts, a web
verifier) plug in through `WRITERS`: each is a callable taking the PublishContext and writing
through `context.out.write`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from ledger import jsonl
from ledger.canonical import canonical_json
from ledger.exceptions import IndexCorrupt, LedgerNotFound, PublishConflict
from ledger.publish.publish_dir import PublishDir
from ledger.store.index import LedgerIndex
from ledger.store.reader import INDEX_FILE, LEDGER_FILE, ROTATIONS_FILE, SEALS_FILE, TREE_DIR
from ledger.store.tlog_store import CheckpointStore, StoredCheckpoint
from ledger.store.tree import FileNodeStore
from ledger.tlog import rfc6962, tiles
from ledger.tlog.checkpoint import Checkpoint, parse_checkpoint
from ledger.tlog.exceptions import TlogCheckFailed
from ledger.tlog.note import Note, NoteSignature, parse_note

CHECKPOINT = "checkpoint"
ROTATIONS = "rotations.json"
SEALS_PREFIX = "seals/"


@dataclass(frozen=True)
class PublishContext:
    """What a writer needs: the ledger's files, the output, and the sizes published before and
    now (`old_size` 0 for a full publish)."""

    ledger_dir: Path
    out: PublishDir
    nodes: FileNodeStore
    index: LedgerIndex
    old_size: int
    new_size: int
    checkpoint: Checkpoint


# (note bytes, size the witnesses last saw, new size, proof_for(size)) -> cosignature lines
Cosigner = Callable[[bytes, int, int, Callable[[int], list[bytes]]], list[NoteSignature]]


@dataclass(frozen=True)
class PublishReport:
    """What one publish did."""

    previous_size: int  # the size published before (with --full: the size it replaced)
    size: int
    written: tuple[str, ...]  # paths written, the checkpoint last
    cosignatures: int
    syncs: int = 0  # fsyncs and file system syncs: one sync, then the checkpoint's two


def seal_path(number: int) -> str:
    """Where seal `number` (0-based line of seals.jsonl) is published."""
    return SEALS_PREFIX + tiles.index_path(number)


def write_hash_tiles(context: PublishContext) -> None:
    """Every hash tile that changed from old_size to new_size (full tiles once, partial ones
    replaced by fuller ones)."""
    for tile in tiles.changed_tiles(context.old_size, context.new_size):
        level = tiles.TILE_HEIGHT * tile.level
        hashes = [context.nodes.node(level, tile.start + i) for i in range(tile.width)]
        context.out.write(tile.path, tiles.encode_hashes(hashes))


def write_entry_bundles(context: PublishContext) -> None:
    """The entry bundle of every level-0 tile that changed; each line is checked against its leaf
    hash first (IndexCorrupt: run `crovia reindex`)."""
    for tile in tiles.changed_tiles(context.old_size, context.new_size):
        if tile.level == 0:
            lines = _lines(context, tile.start, tile.width)
            context.out.write(tile.entries_path, tiles.encode_bundle(lines, tile.start))


def write_seals(context: PublishContext) -> None:
    """Every seal with old_size < leaf_count <= new_size, as `seals/<N>`."""
    for number, (_offset, line) in enumerate(jsonl.iter_lines(context.ledger_dir / SEALS_FILE)):
        count = orjson.loads(line)["leaf_count"]
        if context.old_size < count <= context.new_size:
            context.out.write(seal_path(number), line)


WRITERS: tuple[Callable[[PublishContext], None], ...] = (
    write_hash_tiles,
    write_entry_bundles,
    write_seals,
)


def publish(
    ledger_dir: Path,
    out_dir: Path,
    *,
    full: bool = False,
    cosigner: Cosigner | None = None,
    writers: Sequence[Callable[[PublishContext], None]] = WRITERS,
    lock_timeout: float = 60.0,
) -> PublishReport:
    """Publish the ledger at `ledger_dir` into `out_dir` up to its newest checkpoint.

    `full` rewrites everything, whatever is published. Raises LedgerNotFound when there is no
    ledger or no checkpoint yet (seal first), PublishConflict when `out_dir` holds a checkpoint of
    another origin or another history than the ledger's (never overwritten without `full`),
    LedgerLocked when another publisher holds `out_dir`.
    """
    stored = _newest_checkpoint(ledger_dir)
    with PublishDir.open(out_dir, lock_timeout) as out:
        index = LedgerIndex(ledger_dir / INDEX_FILE, writable=False)
        nodes = FileNodeStore(ledger_dir / TREE_DIR, writable=False)
        try:
            new = stored.checkpoint
            _check_ledger_root(nodes, new)
            rotations = publish_rotations(ledger_dir, out)  # even when no new seal: a hand-over
            old = None if full else _published(out, nodes, new)
            old_size = 0 if old is None else old.size
            replaced = _published_size(out) if full else old_size
            context = PublishContext(ledger_dir, out, nodes, index, old_size, new.size, new)
            if old is not None and old.size == new.size:
                if rotations:  # a hand-over with no new seal: the writers refresh what names keys
                    for writer in writers:
                        writer(context)
                return PublishReport(old.size, new.size, tuple(out.written), 0)
            for writer in writers:
                writer(context)
            cosignatures = _cosign(cosigner, stored.note, old_size, new.size, nodes)
            note = parse_note(stored.note)
            # One sync of everything above, then the checkpoint that makes it reachable.
            checkpoint = Note(note.text, (*note.signatures, *cosignatures)).to_bytes()
            out.write_durably(CHECKPOINT, checkpoint)
            return PublishReport(
                replaced, new.size, tuple(out.written), len(cosignatures), out.syncs
            )
        finally:
            nodes.close()
            index.close()


def publish_rotations(ledger_dir: Path, out: PublishDir) -> tuple[str, ...]:
    """Write `rotations.json` (every crovia.key_rotation.v1 record of rotations.jsonl, oldest
    first, as canonical JSON; `[]` when none) if its bytes change; the paths written."""
    records = [orjson.loads(line) for _, line in jsonl.iter_lines(ledger_dir / ROTATIONS_FILE)]
    data = canonical_json(records)
    if out.read(ROTATIONS) == data:
        return ()
    out.write(ROTATIONS, data)
    return (ROTATIONS,)


def _newest_checkpoint(ledger_dir: Path) -> StoredCheckpoint:
    """The newest stored checkpoint. LedgerNotFound when there is no ledger or none yet."""
    if not (ledger_dir / LEDGER_FILE).is_file() or not (ledger_dir / INDEX_FILE).is_file():
        raise LedgerNotFound(f"no ledger at {ledger_dir}")
    stored = CheckpointStore(ledger_dir).last()
    if stored is None:
        raise LedgerNotFound(f"{ledger_dir} has no checkpoint yet: run `crovia seal` first")
    return stored


def _check_ledger_root(nodes: FileNodeStore, checkpoint: Checkpoint) -> None:
    """The stored nodes must give the signed root: else they are stale (IndexCorrupt)."""
    try:
        computed = rfc6962.root_at(checkpoint.size, nodes)
    except LookupError as exc:
        raise IndexCorrupt(f"{exc}: run `crovia reindex`") from None
    if computed != checkpoint.root:
        raise IndexCorrupt(
            f"the stored Merkle nodes do not give the checkpoint's root at size {checkpoint.size}:"
            " run `crovia reindex`"
        )


def _published_size(out: PublishDir) -> int:
    """The size of the checkpoint `out` holds, whatever its log; 0 when none can be read (what a
    --full publish replaced, for its report)."""
    data = out.read(CHECKPOINT)
    try:
        return 0 if data is None else parse_checkpoint(parse_note(data).text).size
    except TlogCheckFailed:
        return 0


def _published(out: PublishDir, nodes: FileNodeStore, new: Checkpoint) -> Checkpoint | None:
    """The checkpoint already in `out` (None: nothing yet), if the ledger extends it; else
    PublishConflict: publishing over another history must be asked for (--full)."""
    data = out.read(CHECKPOINT)
    if data is None:
        return None
    try:
        old = parse_checkpoint(parse_note(data).text)
    except TlogCheckFailed as exc:
        raise PublishConflict(f"{out.root}/{CHECKPOINT} is not a checkpoint ({exc})") from None
    if old.origin != new.origin:
        raise PublishConflict(
            f"{out.root} holds the log {old.origin!r}, not {new.origin!r} (--full to replace it)"
        )
    if old.size > new.size or rfc6962.root_at(old.size, nodes) != old.root:
        raise PublishConflict(
            f"{out.root} holds a checkpoint at size {old.size} that the ledger (size"
            f" {new.size}) does not extend: another history was published (--full to replace it)"
        )
    return old


def _cosign(
    cosigner: Cosigner | None, note: bytes, old_size: int, new_size: int, nodes: FileNodeStore
) -> list[NoteSignature]:
    if cosigner is None:
        return []

    def proof_for(size: int) -> list[bytes]:
        if size == 0 or size >= new_size:
            return []
        return rfc6962.consistency_proof(size, new_size, nodes)

    return cosigner(note, old_size, new_size, proof_for)


def _lines(context: PublishContext, start: int, count: int) -> list[bytes]:
    """Ledger lines [start, start + count), each checked against its stored leaf hash."""
    row = context.index.leaf(start)
    if row is None:
        raise IndexCorrupt(f"leaf {start} is not in the index: run `crovia reindex`")
    lines = []
    for leaf_index, (_offset, line) in enumerate(
        jsonl.iter_lines(context.ledger_dir / LEDGER_FILE, row.offset), start
    ):
        if leaf_index == start + count:
            break
        if rfc6962.leaf_hash(line) != context.nodes.node(0, leaf_index):
            raise IndexCorrupt(
                f"leaf {leaf_index} differs from its stored hash: run `crovia reindex`"
            )
        lines.append(line)
    if len(lines) != count:
        raise IndexCorrupt(f"the ledger ends before leaf {start + count - 1}")
    return lines
