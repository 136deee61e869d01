"""Published receipts: `<DIR>/receipts/<axiom_id>.json` for every sealed leaf, written once.

Each leaf's receipt binds it to the FIRST seal that covers it, so a published receipt never
changes: publishing is incremental (only the leaves sealed since the last run) and a static server,
an object store or a CDN can cache every file forever. Newer seals are linked to older ones by the
log's consistency proofs, not by rewriting receipts. The bytes are exactly those `crovia prove`
writes for that seal (canonical JSON, no newline).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ledger.canonical import canonical_json
from ledger.files import replace_file
from ledger.jsonl import fsync_dir
from ledger.reader import LedgerReader

RECEIPTS_DIR = "receipts"
# How far publishing got (the leaf count of the newest seal whose leaves all have receipts). A dot
# file: `crovia serve` never serves it, and it says nothing a reader needs.
STATE_FILE = ".published.json"


def publish_receipts(reader: LedgerReader, out_dir: Path) -> int:
    """Write the receipts of every leaf sealed since the last run into `out_dir/receipts/`.

    Returns how many were written. Each file is written to a temporary name, fsynced and renamed,
    and the state advances only after the directory is fsynced, so a crash leaves either no file
    or a whole one, and the next run writes what is missing. Raises OSError on I/O failure.
    """
    target = Path(out_dir) / RECEIPTS_DIR
    target.mkdir(parents=True, exist_ok=True)
    done = _published_count(target)
    written = 0
    for seal in reader.seals():
        if seal["leaf_count"] <= done:
            continue
        for leaf_index in range(done, seal["leaf_count"]):
            _write_receipt(target, reader.receipt_at(leaf_index, seal))
            written += 1
        done = seal["leaf_count"]
    if written:
        fsync_dir(target)
        replace_file(target / STATE_FILE, json.dumps({"leaf_count": done}).encode())
        fsync_dir(target)
    return written


def _published_count(target: Path) -> int:
    try:
        state = json.loads((target / STATE_FILE).read_bytes())
    except FileNotFoundError:
        return 0
    count = state.get("leaf_count") if isinstance(state, dict) else None
    return count if type(count) is int and count >= 0 else 0


def _write_receipt(target: Path, receipt: dict[str, Any]) -> None:
    replace_file(target / f"{receipt['axiom_id']}.json", canonical_json(receipt))
