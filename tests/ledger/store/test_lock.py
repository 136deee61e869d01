"""One writer at a time: a second writer waits up to its timeout, then fails saying who holds it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ledger.exceptions import LedgerLocked
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope

PROJECT = Path(__file__).parents[3]


def test_a_second_writer_gives_up_naming_the_holder(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key), pytest.raises(LedgerLocked) as caught:
        Ledger.open(ledger_dir, signing_key=key, lock_timeout=0.2)
    message = str(caught.value)
    assert f"pid {os.getpid()}" in message and "gave up after 0.2s" in message


def test_a_second_writer_gets_the_lock_once_the_first_closes(ledger_dir: Path, key) -> None:
    first = Ledger.open(ledger_dir, signing_key=key)
    first.issue([sample_envelope(0)])
    waiting = threading.Event()
    results: list[int] = []

    def second_writer() -> None:
        waiting.set()
        with Ledger.open(ledger_dir, signing_key=key, lock_timeout=30) as second:
            results.append(second.issue([sample_envelope(1)])[0].leaf_index)

    thread = threading.Thread(target=second_writer)
    thread.start()
    waiting.wait()
    first.issue([sample_envelope(2)])  # still the only writer: the second is waiting
    first.close()
    thread.join()
    assert results == [2]
    lines = (ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()
    assert len(lines) == 3


def test_a_killed_holder_leaves_no_stale_lock(ledger_dir: Path, key, tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, fcntl, os; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
            " fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
            str(_lock_file(ledger_dir)),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline() == "held\n"
    with pytest.raises(LedgerLocked):
        Ledger.open(ledger_dir, signing_key=key, lock_timeout=0.1)
    holder.kill()
    holder.wait()
    holder.stdin.close()
    holder.stdout.close()
    with Ledger.open(ledger_dir, signing_key=key, lock_timeout=0) as ledger:
        assert ledger.writable


def test_readers_need_no_lock(filled: Path, key) -> None:
    with Ledger.open(filled, signing_key=key), Ledger.open(filled) as reader:
        assert reader.leaf_count == 14


def _lock_file(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return directory / "ledger.lock"
