"""A crash during seal leaves a state the next writer repairs: a seal without its checkpoint gets
one, a torn checkpoint line is quarantined, and the log stays auditable after repeated SIGKILLs."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from ledger.audit import audit
from ledger.keys import generate_signing_key, load_signing_key
from ledger.store import CheckpointStore, Ledger
from tests.vectors.make_vectors import sample_envelope

PROJECT = Path(__file__).parents[3]


def test_a_seal_without_its_checkpoint_gets_one_from_the_next_writer(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(7)])
        ledger.seal()
        ledger.issue([sample_envelope(n) for n in range(7, 9)])
        ledger.seal()
    path = ledger_dir / "tlog" / "checkpoints.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[1][:40])  # killed while appending the second checkpoint
    with Ledger.open(ledger_dir) as reader:  # a reader repairs nothing
        assert [c.leaf_count for c in CheckpointStore(ledger_dir)] == [7]
        assert reader.leaf_count == 9
    with Ledger.open(ledger_dir, signing_key=key):
        pass
    assert path.read_bytes() == b"".join(lines)  # deterministic signatures: the same bytes
    assert [p.read_bytes() for p in (ledger_dir / "quarantine").iterdir()] == [lines[1][:40]]
    audit(ledger_dir)


def test_repeated_sigkills_during_seals_leave_a_repairable_log(tmp_path: Path) -> None:
    directory, key_file = tmp_path / "ledger", tmp_path / "signing.key"
    generate_signing_key(key_file)
    chooser = random.Random(20261130)
    reported: list[int] = []
    for round_number in range(10):
        delay = chooser.uniform(0, 0.02)
        reported += _run_and_kill(directory, key_file, round_number, chooser.randint(1, 4), delay)
    with Ledger.open(directory, signing_key=load_signing_key(key_file)) as ledger:
        last = ledger.last_seal()
    stored = [c.leaf_count for c in CheckpointStore(directory)]
    assert stored[-1] == last["leaf_count"]  # the newest seal has its checkpoint
    assert set(reported) <= set(stored)  # every seal reported durable kept its checkpoint
    assert stored == sorted(set(stored))
    audit(directory)
    seals = [json.loads(x) for x in (directory / "seals.jsonl").read_bytes().splitlines()]
    assert set(reported) <= {s["leaf_count"] for s in seals}


def _run_and_kill(
    directory: Path, key_file: Path, seed: int, seals: int, delay: float
) -> list[int]:
    """Start the child, wait for `seals` durable seals, SIGKILL it `delay` later (the delay only
    moves the kill to a random moment of the next issue or seal)."""
    argv = ["tests.ledger.store.seal_crash_child", str(directory), str(key_file), str(seed)]
    child = subprocess.Popen(
        [sys.executable, "-m", *argv],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        text=True,
    )
    reported: list[int] = []
    try:
        assert child.stdout.readline().startswith("open ")
        for _ in range(seals):
            reported.append(int(child.stdout.readline()))
        time.sleep(delay)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    return reported
