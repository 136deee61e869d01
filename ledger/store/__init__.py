"""The ledger directory: lock, append, crash recovery, index, tree nodes, kept bodies, reading,
finding, and the checkpoints the tlog writes beside the seals.

`Ledger` (store.py) is the writer; `LedgerReader` (reader.py) reads without the lock; `find`
answers queries; `bodies` keeps fetched bodies content-addressed; `timeline` reads an item's history
from the fetch records. May import the format root,
`ledger.tlog`, `ledger.keys`, `ledger.stamps` and `ledger.receipt` (a reader builds receipts),
never the audit, publish or monitor rooms. Exports what the rest of the project uses.
"""

from __future__ import annotations

from ledger.store.bodies import MAX_BODY_BYTES, BodyStore, check_cited
from ledger.store.find import find_leaves, parse_since
from ledger.store.index import IndexEntry, Versions, identity_digest
from ledger.store.ledger import LEDGER_FILE, Ledger
from ledger.store.reader import ROTATIONS_FILE, RUNS_FILE, SEALS_FILE
from ledger.store.timeline import (
    FeedTimeline,
    FetchSeen,
    Timeline,
    fetched_feeds,
    item_envelopes,
    timeline,
)
from ledger.store.tlog_store import (
    CheckpointStore,
    LogOriginChanged,
    default_origin,
    log_origin,
    note_verifier_key,
    tlog_proof_for,
)
from ledger.store.tree import FileNodeStore, MemoryFrontier

__all__ = [
    "LEDGER_FILE",
    "MAX_BODY_BYTES",
    "ROTATIONS_FILE",
    "RUNS_FILE",
    "SEALS_FILE",
    "BodyStore",
    "CheckpointStore",
    "FeedTimeline",
    "FetchSeen",
    "FileNodeStore",
    "IndexEntry",
    "Ledger",
    "LogOriginChanged",
    "MemoryFrontier",
    "Timeline",
    "Versions",
    "check_cited",
    "default_origin",
    "fetched_feeds",
    "find_leaves",
    "identity_digest",
    "item_envelopes",
    "log_origin",
    "note_verifier_key",
    "parse_since",
    "timeline",
    "tlog_proof_for",
]
