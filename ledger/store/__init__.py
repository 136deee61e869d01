"""The ledger directory: lock, append, crash recovery, index, tree nodes, kept bodies, reading,
finding, and the checkpoints the tlog writes beside the seals.

`Ledger` (store.py) is the writer; `LedgerReader` (reader.py) reads without the lock; `find`
answers queries; `bodies` keeps fetched bodies content-addressed; `timeline` reads an item's history
from the fetch records, `pages` its page's from the capture records. May import the format root,
`ledger.tlog`, `ledger.keys`, `ledger.stamps` and `ledger.receipt` (a reader builds receipts),
never the audit, publish or monitor rooms. Exports what the rest of the project uses.
"""

from __future__ import annotations

from ledger import exports_on_first_use

# Each name this package exports and the module that defines it, imported on first use (as
# `ledger.keys` does): `crovia audit` needs the reader, index, bodies and tree modules, not the
# writer, `find` or the timeline, whose imports cost a few hundredths of a second at every start.
# `timeline` is a module's name (which importing it binds here), so its function is exported as
# `item_timeline` ("module.name" below).
_EXPORTS = {
    "BodyStore": "bodies",
    "CheckpointStore": "tlog_store",
    "EntryCache": "entry_cache",
    "FeedTimeline": "timeline",
    "FetchSeen": "timeline",
    "FileNodeStore": "tree",
    "IndexEntry": "index",
    "LEDGER_FILE": "ledger",
    "Ledger": "ledger",
    "LogOriginChanged": "tlog_store",
    "MAX_BODY_BYTES": "bodies",
    "MemoryFrontier": "tree",
    "PageCapture": "pages",
    "PageHistory": "pages",
    "capture_of": "pages",
    "chain_key": "pages",
    "page_chains": "pages",
    "page_history": "pages",
    "vendor_items": "pages",
    "NO_MAIN_TEXT": "pages",
    "ROTATIONS_FILE": "reader",
    "RUNS_FILE": "reader",
    "SEALS_FILE": "reader",
    "Timeline": "timeline",
    "Versions": "index",
    "check_cited": "bodies",
    "check_writer_key": "writer_key",
    "default_origin": "tlog_store",
    "fetched_feeds": "timeline",
    "item_timeline": "timeline.timeline",
    "find_leaves": "find",
    "identity_digest": "index",
    "item_envelopes": "timeline",
    "keep_pages": "bodies",
    "ledger_key_context": "writer_key",
    "load_ledger_key": "writer_key",
    "log_origin": "tlog_store",
    "note_verifier_key": "tlog_store",
    "parse_since": "find",
    "tlog_proof_for": "tlog_store",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
