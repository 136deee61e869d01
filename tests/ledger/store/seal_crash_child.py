"""A writer that issues and seals forever, for the SIGKILL test of checkpoints: prints each seal's
leaf_count once the seal and its checkpoint are durable.

    python -m tests.ledger.store.seal_crash_child LEDGER_DIR KEY_FILE SEED
"""

from __future__ import annotations

import random
import sys

from ledger.keys import load_signing_key
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


def main(directory: str, key_file: str, seed: str) -> None:
    chooser = random.Random(int(seed))
    key = load_signing_key(key_file)
    with Ledger.open(directory, signing_key=key, lock_timeout=30) as ledger:
        print("open", ledger.leaf_count, flush=True)
        while True:
            start = ledger.leaf_count
            ledger.issue([sample_envelope(n) for n in range(start, start + chooser.randint(1, 3))])
            print(ledger.seal()["leaf_count"], flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
