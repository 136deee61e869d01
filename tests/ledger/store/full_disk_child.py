"""A writer whose file-size limit runs out mid-batch, for the full-disk test.

    python -m tests.ledger.store.full_disk_child LEDGER_DIR

RLIMIT_FSIZE makes the kernel refuse the batch's write part way (EFBIG) the way a full disk does
(ENOSPC). Prints one JSON object: the error, the ledger file's size before and after the failed
batch, and the leaves of the batch issued once the limit is lifted.
"""

from __future__ import annotations

import json
import resource
import signal
import sys
from pathlib import Path

import nacl.signing

from ledger.store import LEDGER_FILE, Ledger
from tests.vectors.make_vectors import sample_envelope


def main(directory: str) -> None:
    ledger_file = Path(directory) / LEDGER_FILE
    with Ledger.open(directory, signing_key=nacl.signing.SigningKey.generate()) as ledger:
        ledger.issue([sample_envelope(0)])
        before = ledger_file.stat().st_size
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a dead process
        limits = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (before + 5000, limits[1]))
        try:
            ledger.issue([sample_envelope(n) for n in range(1, 40)])
        except OSError as exc:
            error = exc.errno
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        after = ledger_file.stat().st_size
        issued = ledger.issue([sample_envelope(n) for n in range(100, 102)])
        ledger.seal()
    report = {"errno": error, "before": before, "after": after}
    print(json.dumps({**report, "issued": [item.leaf_index for item in issued]}))


if __name__ == "__main__":
    main(*sys.argv[1:])
