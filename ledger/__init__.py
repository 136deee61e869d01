"""The ledger: envelopes, append-only JSONL storage, Merkle seals, receipts, offline verifier.

Knows nothing of Scrapy, HTTP or feeds. The package is split into rooms by concern (docs/design.md,
"The ledger's rooms"): the format at this root, then `tlog/` and `keys/`, `stamps/`, `receipt/`,
`store/`, `audit/` and `publish/`, and `monitor/`; imports run one way, down that list. Data flow:
docs/design.md, steps 4-6; formats, storage, recovery and the CLI: docs/ledger.md.

The short public API, loaded on first use so that `import ledger` stays cheap:

- `verify_receipt_bytes(data, ...)`: `crovia verify`'s check of one receipt (`ledger.receipt`);
- `Ledger.open(directory, ...)`: the writer, or a reader without a key (`ledger.store`); a
  receipt is `Ledger.open(d).receipt(axiom_id)`, as `crovia prove` makes it;
- `load_signing_key(path)`, `generate_signing_key(path)`: key files (`ledger.keys`).
"""

from __future__ import annotations

import importlib
from typing import Any

_API = {
    "verify_receipt_bytes": "ledger.receipt",
    "Ledger": "ledger.store",
    "load_signing_key": "ledger.keys",
    "generate_signing_key": "ledger.keys",
}
__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    room = _API.get(name)
    if room is None:
        raise AttributeError(f"module 'ledger' has no attribute {name!r}")
    return getattr(importlib.import_module(room), name)
