"""A publisher that dies in the middle of writing a file, for the torn-tile test.

    python -m tests.ledger.publish.publish_child LEDGER_DIR PUB_DIR N

Its N-th file write stops halfway: it prints `torn` and waits for the parent's SIGKILL, as a
power cut or a kill -9 would leave it. Only the standard library's os.write is wrapped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ledger.publish import publish


def main(ledger_dir: str, pub: str, target: str) -> None:
    real_write, calls = os.write, [0]

    def write(fd: int, data: bytes) -> int:
        calls[0] += 1
        if calls[0] == int(target):
            real_write(fd, bytes(data[: len(data) // 2]))
            print("torn", flush=True)
            sys.stdin.read()  # never returns: the parent kills this process here
        return real_write(fd, data)

    os.write = write
    publish(Path(ledger_dir), Path(pub))
    print("finished", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
