"""Fuzz harness: a receipt file's bytes, through `verify_receipt_bytes` (ledger/receipt/).

Its documented errors are the VerificationError family (a failed check, exit 1 in the CLI); a
receipt carrying RFC 3161 tokens or an OpenTimestamps proof reaches the stamp checks too.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.exceptions import VerificationError
    from ledger.receipt import verify_receipt_bytes
    from ledger.stamps import tst  # noqa: F401  (loaded lazily for a token: instrumented here)

DOCUMENTED = (VerificationError,)
SLACK = 64 << 10


def target(data: bytes) -> None:
    verify_receipt_bytes(data)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
