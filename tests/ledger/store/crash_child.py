"""A writer that appends forever, for the SIGKILL test: prints each leaf index once it is durable.

    python -m tests.ledger.store.crash_child LEDGER_DIR KEY_FILE SEED

Leaf n always holds sample_envelope(n), so the parent can tell a lost leaf from a doubled one.
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
    with Ledger.open(directory, signing_key=key, lock_timeout=30, seal_every=25) as ledger:
        print("open", ledger.leaf_count, flush=True)
        while True:
            start = ledger.leaf_count
            size = chooser.randint(1, 40)
            issued = ledger.issue([sample_envelope(n) for n in range(start, start + size)])
            print(" ".join(str(item.leaf_index) for item in issued), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
