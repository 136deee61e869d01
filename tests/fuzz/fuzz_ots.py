"""Fuzz harness: OpenTimestamps proofs as a verifier reads them (ledger/stamps/ots.py).

The bytes are read as a detached `.ots` file by `scan_detached`, the walk that `crovia verify`,
`crovia prove`, the audit and the stamp counts use: the library's readers of operations and
attestations, no tree, within the bounds (total bytes, tags per byte, depth, message bytes,
nothing repeated in a node). Documented error: OtsInvalid.

SLACK: a proof may compute 68 KiB of messages beyond 8 bytes per byte of it (16 calendar
answers' allowance, docs/stamps.md), all of which its open nodes and attestations may hold.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.exceptions import OtsInvalid
    from ledger.stamps import ots

DOCUMENTED = (OtsInvalid,)
SLACK = 96 << 10


def target(data: bytes) -> None:
    ots.scan_detached(data)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
