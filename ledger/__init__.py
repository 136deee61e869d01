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
from collections.abc import Callable, Mapping
from typing import Any


def exports_on_first_use(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name of `exports` on first use,
    from the submodule it maps to (relative to `package`; `"module.name"` when the name there
    differs). The packages here use it so that importing one of their modules stays cheap."""

    def __getattr__(name: str) -> Any:
        found = exports.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, defined = found.partition(".")
        return getattr(importlib.import_module(f"{package}.{module}"), defined or name)

    return __getattr__


_API = {
    "verify_receipt_bytes": "receipt",
    "Ledger": "store",
    "load_signing_key": "keys",
    "generate_signing_key": "keys",
}
__all__ = sorted(_API)
__getattr__ = exports_on_first_use(__name__, _API)
