"""A log and a witness on 127.0.0.1: `crovia witness serve` over HTTP, `crovia publish --witness`,
and `crovia monitor --quorum`."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.keys import generate_signing_key
from ledger.tlog.checkpoint import parse_checkpoint
from ledger.tlog.note import parse_note
from ledger.tlog.rfc6962 import MemoryNodes, consistency_proof
from ledger.tlog.witness import format_request
from tests.ledger.conftest import Log

PROJECT = Path(__file__).resolve().parents[3]


class WitnessProcess:
    def __init__(self, url: str, vkey: str) -> None:
        self.url, self.vkey = url, vkey

    def latest_size(self, origin: str) -> int:
        hashed = hashlib.sha256(origin.encode()).hexdigest()
        with urllib.request.urlopen(f"{self.url}{hashed}/checkpoint", timeout=10) as answer:
            return parse_checkpoint(parse_note(answer.read()).text).size


@contextmanager
def running_witness(tmp_path: Path, *log_args: str) -> Iterator[WitnessProcess]:
    """`crovia witness serve` on 127.0.0.1 (any port) with a new key and `log_args` (its --log
    and the like), until the block ends."""
    key = tmp_path / "witness.key"
    generate_signing_key(key)
    command = [sys.executable, "-m", "crovia_spider", "witness", "serve", "--key", str(key)]
    command += ["--name", "witness.test/w1", *log_args]
    command += ["--state", str(tmp_path / "witness-state"), "--port", "0"]
    child = subprocess.Popen(command, cwd=PROJECT, stdout=subprocess.PIPE, text=True)
    try:
        words = child.stdout.readline().split()
        assert words[:4] == ["witness", "witness.test/w1", "listening", "on"], words
        yield WitnessProcess(words[4], words[6])
    finally:
        child.terminate()
        child.wait(timeout=30)
        child.stdout.close()


@pytest.fixture
def witness(log: Log, tmp_path: Path) -> Iterator[WitnessProcess]:
    with running_witness(tmp_path, "--log", f"{log.origin}={log.vkey}") as process:
        yield process


def publish(log: Log, *witnesses: str, pub: Path | None = None) -> None:
    flags = [f"--witness={url}" for url in witnesses]
    assert main(["publish", str(pub or log.pub), "--ledger-dir", str(log.ledger_dir), *flags]) == 0


def monitor(log: Log, witness: WitnessProcess, state: Path, pub: Path | None = None) -> int:
    args = ["monitor", str(pub or log.pub), "--vkey", log.vkey, "--state", str(state)]
    return main([*args, "--witness", witness.vkey, "--quorum", "1"])


def test_the_witness_cosigns_consistent_checkpoints_and_refuses_a_fork(
    log: Log, witness: WitnessProcess, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    log.grow(10)
    publish(log, witness.url)
    assert monitor(log, witness, tmp_path / "state") == 0
    log.grow(290)
    publish(log, witness.url)
    assert witness.latest_size(log.origin) == 300
    assert monitor(log, witness, tmp_path / "state") == 0
    assert "size 300: +290 entries verified" in capsys.readouterr().out

    forked = Log(tmp_path / "forked", tmp_path / "forked-pub", log.key)
    forked.grow(400, tag=1)  # same key, another history
    publish(forked, witness.url)  # the witness refuses; publishing goes on without it
    assert witness.latest_size(log.origin) == 300
    assert "witness.test/w1" not in (forked.pub / "checkpoint").read_text()
    state = (tmp_path / "state").read_bytes()
    assert monitor(log, witness, tmp_path / "state", pub=forked.pub) == 1
    assert "witness_quorum" in capsys.readouterr().err
    assert (tmp_path / "state").read_bytes() == state


def test_a_fork_at_the_witness_own_size_gets_422(
    log: Log, witness: WitnessProcess, tmp_path
) -> None:
    log.grow(10)
    publish(log, witness.url)
    forked = Log(tmp_path / "forked", tmp_path / "forked-pub", log.key)
    forked.grow(20, tag=1)
    publish(forked)
    from ledger.tlog.rfc6962 import leaf_hash

    lines = (forked.ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()
    proof = consistency_proof(10, 20, MemoryNodes([leaf_hash(line) for line in lines]))
    body = format_request(10, proof, (forked.pub / "checkpoint").read_bytes())
    request = urllib.request.Request(witness.url + "add-checkpoint", data=body, method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 422
    refused.value.close()


def test_a_witness_that_is_down_never_blocks_publishing(log: Log) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    log.grow(5)
    publish(log, f"http://127.0.0.1:{port}/")
    assert parse_checkpoint(parse_note((log.pub / "checkpoint").read_bytes()).text).size == 5
