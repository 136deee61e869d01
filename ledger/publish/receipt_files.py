"""Published receipts: `<DIR>/receipts/<axiom_id>.json` for every sealed leaf, written once.

A writer of `crovia publish` (ledger/publish/publisher.py, `WRITERS`): each leaf newly published
gets the receipt that binds it to the FIRST seal covering it, so a published receipt never changes
and publishing stays incremental (only the leaves between the published checkpoint and the new one).
Newer seals are linked to older ones by the log's consistency proofs, not by rewriting receipts.
The bytes are exactly those `crovia prove` writes for that seal (canonical JSON, no newline), with
the stamps and key rotations that exist when the leaf is published.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ledger import jsonl
from ledger.canonical import canonical_json
from ledger.publish.publisher import PublishContext
from ledger.store.ledger import Ledger
from ledger.store.reader import SEALS_FILE

RECEIPTS_PREFIX = "receipts/"


def write_receipts(context: PublishContext) -> None:
    """Write the receipt of every leaf in [old_size, new_size) under the first seal covering it.

    Raises OSError on I/O failure; the checkpoint is written after every writer, so a crash here
    leaves the old checkpoint, and the next publish writes these receipts again.
    """
    with Ledger.open(context.ledger_dir) as reader:  # a reader: no key, no lock, never writes
        for seal, first, end in _first_seals(context):
            for receipt in reader.receipts_at(seal, range(first, end)):
                context.out.write(receipt_path(receipt["axiom_id"]), canonical_json(receipt))


def receipt_path(axiom_id: str) -> str:
    """Where the receipt of `axiom_id` is published."""
    return f"{RECEIPTS_PREFIX}{axiom_id}.json"


def _first_seals(context: PublishContext) -> Iterator[tuple[dict[str, Any], int, int]]:
    """(seal, first leaf, end) for each seal that first covers leaves in [old_size, new_size)."""
    previous = 0
    for _offset, line in jsonl.iter_lines(context.ledger_dir / SEALS_FILE):
        seal = orjson.loads(line)
        count = seal["leaf_count"]
        first, end = max(previous, context.old_size), min(count, context.new_size)
        if first < end:
            yield seal, first, end
        previous = max(previous, count)
        if previous >= context.new_size:
            return
