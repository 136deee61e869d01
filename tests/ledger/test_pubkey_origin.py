"""Issue 43, observation 9: `crovia pubkey --key K` (no `--ledger-dir`) named the note key after
the origin of the ledger in CROVIA_LEDGER_DIR even when K never sealed that ledger: a verifier key
that matches neither log, and no word said.

Now `crovia pubkey` names the origin it used and where it came from, and refuses a key that is not
in the chain of the ledger it reads (its seals' and rotations' keys, else leaf 0's signer);
`--no-ledger` is the key alone (a witness key, a key before `crovia rotate-key`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.keys import generate_signing_key, key_id
from ledger.store import Ledger, default_origin, note_verifier_key
from tests.vectors.make_vectors import sample_envelope

ORIGIN = "news.example.org/log"


@pytest.fixture
def sealed(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A ledger sealed by key A with checkpoints under ORIGIN; (its directory, A's file)."""
    directory, key_file = tmp_path / "ledger", tmp_path / "a.key"
    key = generate_signing_key(key_file)
    with Ledger.open(directory, signing_key=key, log_origin=ORIGIN) as ledger:
        ledger.issue([sample_envelope(n) for n in range(3)])
        ledger.seal()
    monkeypatch.setenv("CROVIA_LEDGER_DIR", str(directory))
    return directory, key_file


def test_a_key_that_never_sealed_the_ledger_is_refused_naming_the_ledger(sealed, tmp_path, capsys):
    directory, _ = sealed
    other = tmp_path / "b.key"
    public = bytes(generate_signing_key(other).verify_key)
    trust = tmp_path / "trust_root.json"
    assert main(["pubkey", "--key", str(other)]) == 2
    assert main(["pubkey", "--key", str(other), "--trust-root", str(trust)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not trust.exists()
    assert f"key_id {key_id(public)} is not a key of the ledger at {directory}" in err
    assert "(CROVIA_LEDGER_DIR)" in err and "--no-ledger" in err
    assert ORIGIN not in out


def test_the_ledgers_own_key_names_the_origin_it_used(sealed, capsys):
    directory, key_file = sealed
    assert main(["pubkey", "--key", str(key_file)]) == 0
    out = capsys.readouterr().out
    assert f"log origin: {ORIGIN} (the checkpoints of {directory})" in out
    assert f"note verifier key: {ORIGIN}+" in out
    assert main(["pubkey", "--key", str(key_file), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["origin"] == ORIGIN and shown["ledger_dir"] == str(directory)
    assert shown["origin_from"] == f"the checkpoints of {directory}"


def test_no_ledger_is_the_key_alone_and_says_so(sealed, tmp_path, capsys):
    other = tmp_path / "b.key"
    public = bytes(generate_signing_key(other).verify_key)
    assert main(["pubkey", "--key", str(other), "--no-ledger", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["origin"] == default_origin(public) and shown["ledger_dir"] is None
    assert shown["note_verifier_key"] == note_verifier_key(public, default_origin(public))
    assert shown["origin_from"] == "the key's own default (no ledger)"


def test_a_ledger_not_there_yet_takes_the_keys_default_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CROVIA_LOG_ORIGIN", raising=False)
    key_file = tmp_path / "k.key"
    public = bytes(generate_signing_key(key_file).verify_key)
    absent = tmp_path / "no-ledger-here"
    assert main(["pubkey", "--key", str(key_file), "--ledger-dir", str(absent)]) == 0
    out = capsys.readouterr().out
    assert f"log origin: {default_origin(public)} (the key's own default: no ledger at" in out
    monkeypatch.setenv("CROVIA_LOG_ORIGIN", "mine.example/log")
    assert main(["pubkey", "--key", str(key_file), "--ledger-dir", str(absent)]) == 0
    assert "log origin: mine.example/log (CROVIA_LOG_ORIGIN)" in capsys.readouterr().out


def test_the_key_a_rotation_handed_over_to_keeps_the_logs_origin(sealed, tmp_path, capsys):
    directory, key_file = sealed
    new = tmp_path / "new.key"
    generate_signing_key(new)
    assert main(["rotate-key", "--new-key", str(new), "--key", str(key_file)]) == 0
    capsys.readouterr()
    assert main(["pubkey", "--key", str(new)]) == 0
    assert f"log origin: {ORIGIN} (the checkpoints of {directory})" in capsys.readouterr().out
    assert main(["pubkey", "--key", str(key_file)]) == 0  # the old key is in the chain too
