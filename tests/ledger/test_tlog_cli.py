"""`crovia prove --tlog-proof`, `crovia consistency`, and the note key in `crovia pubkey`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.keys import generate_signing_key
from ledger.store import CheckpointStore, Ledger
from ledger.tlog import rfc6962
from ledger.tlog.checkpoint import open_checkpoint
from ledger.tlog.note import Ed25519Verifier
from ledger.tlog.proof import parse_tlog_proof, verify_tlog_proof
from tests.vectors.make_vectors import sample_envelope

ORIGIN = "example.org/crovia-test"


@pytest.fixture
def logged(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A ledger sealed at 6 and at 19 leaves (via `crovia seal`, under ORIGIN), and its key."""
    monkeypatch.setenv("CROVIA_LOG_ORIGIN", ORIGIN)
    directory, key_file = tmp_path / "ledger", tmp_path / "signing.key"
    key = generate_signing_key(key_file)
    for end in (6, 19):
        with Ledger.open(directory, signing_key=key) as ledger:
            ledger.issue([sample_envelope(n) for n in range(ledger.leaf_count, end)])
        assert main(["seal", "--ledger-dir", str(directory), "--key", str(key_file)]) == 0
    return directory, key_file


def _vkey(key_file: Path, capsys) -> str:
    assert main(["pubkey", "--key", str(key_file), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["note_verifier_key"]


def test_pubkey_prints_the_note_verifier_key(logged, capsys, tmp_path: Path) -> None:
    _directory, key_file = logged
    vkey = _vkey(key_file, capsys)
    assert vkey.startswith(ORIGIN + "+")
    trust = tmp_path / "trust_root.json"
    assert main(["pubkey", "--key", str(key_file), "--trust-root", str(trust)]) == 0
    assert f"note verifier key: {vkey}" in capsys.readouterr().out
    assert json.loads(trust.read_text())["note_verifier_key"] == vkey


def test_prove_writes_a_tlog_proof_that_verifies(logged, capsys, tmp_path: Path) -> None:
    directory, key_file = logged
    vkey = _vkey(key_file, capsys)
    line = (directory / "axiom_ledger.jsonl").read_bytes().splitlines()[4]
    axiom_id = json.loads(line)["axiom_id"]
    plain, with_proof, proof_file = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "p"
    assert main(["prove", axiom_id, "--ledger-dir", str(directory), "--out", str(plain)]) == 0
    argv = ["prove", axiom_id, "--ledger-dir", str(directory), "--out", str(with_proof)]
    assert main([*argv, "--tlog-proof", str(proof_file)]) == 0
    assert with_proof.read_bytes() == plain.read_bytes()  # the receipt is unchanged
    parsed = parse_tlog_proof(proof_file.read_bytes())
    assert parsed.index == 4
    verifier = Ed25519Verifier.from_vkey(vkey)
    checkpoint = verify_tlog_proof(parsed, rfc6962.leaf_hash(line), ORIGIN, [verifier])
    assert checkpoint.size == 19 == json.loads(plain.read_bytes())["seal"]["leaf_count"]


def test_consistency_prints_a_proof_between_the_checkpoints(logged, capsys) -> None:
    directory, key_file = logged
    verifier = Ed25519Verifier.from_vkey(_vkey(key_file, capsys))
    old, new = (open_checkpoint(c.note, ORIGIN, [verifier])[0] for c in CheckpointStore(directory))
    assert main(["consistency", "6", "19", "--ledger-dir", str(directory)]) == 0
    proof = [base64.b64decode(h) for h in capsys.readouterr().out.split()]
    rfc6962.verify_consistency(old.size, new.size, old.root, new.root, proof)
    assert main(["consistency", "19", "19", "--ledger-dir", str(directory)]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("sizes", [("6", "20"), ("7", "6")])
def test_consistency_refuses_sizes_the_ledger_does_not_have(logged, capsys, sizes) -> None:
    directory, _key_file = logged
    assert main(["consistency", *sizes, "--ledger-dir", str(directory)]) == 2
    assert "OLD_SIZE <= NEW_SIZE <= 19" in capsys.readouterr().err
    assert main(["consistency", "0", "6", "--ledger-dir", str(directory)]) == 2  # argparse's
