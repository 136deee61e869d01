"""Crash recovery for real: torn lines are quarantined, derived storage is rebuilt, and a writer
SIGKILLed again and again loses no leaf it reported durable and writes none twice."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from crovia_spider.cli import main
from ledger.audit import audit
from ledger.keys import generate_signing_key, load_signing_key
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope

PROJECT = Path(__file__).parents[3]


def test_a_torn_last_line_is_moved_to_quarantine(filled: Path, key) -> None:
    jsonl = filled / "axiom_ledger.jsonl"
    intact = jsonl.read_bytes()
    torn = b'{"anchors":[{"chain":"crovia.axiom_ledger","hei'
    with open(jsonl, "ab") as out:
        out.write(torn)
    with open(filled / "seals.jsonl", "ab") as out:
        out.write(b'{"first_collector')
    with Ledger.open(filled) as reader:  # a reader ignores the torn tail and touches nothing
        assert reader.leaf_count == 14
    assert jsonl.read_bytes() == intact + torn
    with Ledger.open(filled, signing_key=key) as ledger:
        assert ledger.leaf_count == 14 and ledger.last_seal()["leaf_count"] == 11
        ledger.issue([sample_envelope(14)])
    assert jsonl.read_bytes().startswith(intact) and jsonl.read_bytes().endswith(b"\n")
    moved = sorted(p.read_bytes() for p in (filled / "quarantine").iterdir())
    assert moved == sorted([torn, b'{"first_collector'])
    audit(filled)


def test_derived_storage_lagging_the_jsonl_is_caught_up(filled: Path, key) -> None:
    """As if killed after the JSONL fsync but before the index and node files were written."""
    with Ledger.open(filled, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(14, 20)])
        ledger.seal()
    lines = (filled / "axiom_ledger.jsonl").read_bytes()
    os.truncate(filled / "tree" / "level-00.bin", 13 * 32 + 5)  # a torn node record too
    os.truncate(filled / "tree" / "level-02.bin", 32)
    with Ledger.open(filled, signing_key=key) as ledger:
        ledger._index.truncate(9)  # the index lags too
    with Ledger.open(filled, signing_key=key) as ledger:
        assert ledger.leaf_count == 20
        assert ledger.merkle_root().hex() == ledger.last_seal()["merkle_root"]
        assert ledger.latest_for_target("https://arxiv.org/abs/2606.00019").leaf_index == 19
    assert (filled / "axiom_ledger.jsonl").read_bytes() == lines


def test_repeated_sigkills_lose_nothing_reported_and_double_nothing(tmp_path: Path) -> None:
    directory, key_file = tmp_path / "ledger", tmp_path / "signing.key"
    generate_signing_key(key_file)
    chooser = random.Random(20260618)
    reported: list[int] = []
    for round_number in range(12):
        delay = chooser.uniform(0, 0.03)
        reported += _run_and_kill(directory, key_file, round_number, chooser.randint(1, 6), delay)
    with Ledger.open(directory, signing_key=load_signing_key(key_file)) as ledger:
        count = ledger.leaf_count
        ledger.seal()
    assert main(["audit", "--ledger-dir", str(directory)]) == 0
    lines = (directory / "axiom_ledger.jsonl").read_bytes().splitlines()
    titles = [json.loads(line)["body"]["title"] for line in lines]
    assert len(set(titles)) == len(titles) == count  # none written twice
    assert len(set(reported)) == len(reported)
    for index in reported:  # none reported durable is lost, and each is where it was reported
        assert titles[index] == sample_envelope(index)["body"]["title"]
    assert titles == [sample_envelope(n)["body"]["title"] for n in range(count)]


def _run_and_kill(
    directory: Path, key_file: Path, seed: int, batches: int, delay: float
) -> list[int]:
    """Start the child, wait until it reports `batches` durable batches, SIGKILL it `delay` later.

    The delay is not synchronisation: it moves the kill to a random moment of the next batch
    (signing, writing, fsync, index or node update)."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.ledger.store.crash_child",
            str(directory),
            str(key_file),
            str(seed),
        ],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        text=True,
    )
    reported: list[int] = []
    try:
        assert child.stdout.readline().startswith("open ")
        for _ in range(batches):
            reported += [int(n) for n in child.stdout.readline().split()]
        time.sleep(delay)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    return reported
