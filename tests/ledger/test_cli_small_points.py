"""The smaller points of issue 17 (obs 9): `audit --pubkey OLD` labels the old key "(pinned)",
`publish --full` reports the size it replaced, `publish` and `serve` print a `/v/<axiom_id>`
address to open, `witness serve --log VKEY` takes the origin from the key's name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from crovia_spider.cli.witness_cmds import parse_logs
from crovia_spider.exceptions import ConfigError
from ledger.keys import key_id
from ledger.store import Ledger
from tests.ledger.conftest import Log
from tests.vectors.make_vectors import sample_envelope

PROJECT = Path(__file__).parents[2]


def _kid(key: nacl.signing.SigningKey) -> str:
    return key_id(bytes(key.verify_key))


def test_audit_pinned_to_the_old_key_labels_the_old_key(ledger_dir: Path, key, capsys) -> None:
    new_key = nacl.signing.SigningKey.generate()
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(3)])
        ledger.rotate_key(new_key)
        ledger.issue([sample_envelope(n) for n in range(3, 6)])
        ledger.seal()
    old_hex = bytes(key.verify_key).hex()
    assert main(["audit", "--ledger-dir", str(ledger_dir), "--pubkey", old_hex]) == 0
    out = capsys.readouterr().out
    assert f"{_kid(key)} (pinned)" in out
    assert f"{_kid(new_key)} (pinned)" not in out
    new_hex = bytes(new_key.verify_key).hex()
    assert main(["audit", "--ledger-dir", str(ledger_dir), "--pubkey", new_hex]) == 0
    out = capsys.readouterr().out
    assert f"{_kid(new_key)} (pinned)" in out and f"{_kid(key)} (pinned)" not in out


def _newest_axiom(log: Log) -> str:
    with Ledger.open(log.ledger_dir) as reader:
        return reader.envelope(reader.leaf_count - 1)["axiom_id"]


def test_publish_full_reports_the_size_it_replaced_and_publish_prints_a_v_address(
    log: Log, capsys
) -> None:
    log.grow(5)
    argv = ["publish", str(log.pub), "--ledger-dir", str(log.ledger_dir)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(was 0)" in out and f"/v/{_newest_axiom(log)}" in out
    log.grow(3)
    assert main([*argv, "--full"]) == 0
    out = capsys.readouterr().out
    assert "published size 8 (was 5)" in out and f"/v/{_newest_axiom(log)}" in out


def test_serve_prints_a_v_address_to_open(log: Log) -> None:
    log.grow(4)
    assert main(["publish", str(log.pub), "--ledger-dir", str(log.ledger_dir)]) == 0
    child = subprocess.Popen(
        [sys.executable, "-m", "crovia_spider", "serve", str(log.pub), "--port", "0"],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first, second = child.stdout.readline(), child.stdout.readline()
    finally:
        child.terminate()
        child.wait(timeout=30)
        child.stdout.close()
    assert first.startswith("serving ")
    assert f"/v/{_newest_axiom(log)}" in second and second.strip().split()[-1].startswith("http")


def test_witness_log_takes_the_origin_from_the_vkey(log: Log) -> None:
    assert list(parse_logs([log.vkey])) == [log.origin]
    assert list(parse_logs([f"{log.origin}={log.vkey}"])) == [log.origin]  # still accepted
    with pytest.raises(ConfigError, match="is not the origin"):
        parse_logs([f"another.example/log={log.vkey}"])
    with pytest.raises(ConfigError):
        parse_logs(["not a key"])
