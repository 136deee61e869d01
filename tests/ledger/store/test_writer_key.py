"""One key per ledger: a writer with another key is refused and leaves every byte as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from ledger.exceptions import WrongSigningKey
from ledger.keys import generate_signing_key, key_id
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


def snapshot(directory: Path) -> dict[str, str]:
    """sha256 of every file under `directory` (the lock file and derived files included)."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def kid(key: nacl.signing.SigningKey) -> str:
    return key_id(bytes(key.verify_key))


@pytest.fixture
def other() -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey.generate()


def refused(ledger_dir: Path, key, other) -> WrongSigningKey:
    before = snapshot(ledger_dir)
    with pytest.raises(WrongSigningKey) as caught:
        Ledger.open(ledger_dir, signing_key=other)
    assert snapshot(ledger_dir) == before
    assert kid(other) in str(caught.value)
    return caught.value


def test_a_sealed_ledger_refuses_another_key_naming_both(filled: Path, key, other) -> None:
    error = refused(filled, key, other)
    assert kid(key) in str(error) and "crovia rotate-key" in str(error)
    with Ledger.open(filled, signing_key=key) as ledger:  # its own key still writes
        ledger.issue([sample_envelope(99)])


def test_an_unsealed_ledger_knows_its_key_from_leaf_0(ledger_dir: Path, key, other) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(3)])
    assert "leaf 0" in str(refused(ledger_dir, key, other))
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        assert ledger.seal()["key_id"] == kid(key)


def test_the_first_seal_decides_not_a_later_one(filled: Path, key, other) -> None:
    """Seals appended by another key (before this rule) do not make that key the ledger's."""
    seals = filled / "seals.jsonl"
    first = seals.read_bytes()
    with Ledger.open(filled, signing_key=key) as ledger:
        ledger.seal()
    foreign = (
        (filled / "seals.jsonl")
        .read_bytes()[len(first) :]
        .replace(bytes(key.verify_key).hex().encode(), bytes(other.verify_key).hex().encode())
    )
    seals.write_bytes(first + foreign)
    refused(filled, key, other)


def test_an_empty_ledger_takes_any_key(ledger_dir: Path, other) -> None:
    with Ledger.open(ledger_dir, signing_key=other) as ledger:
        ledger.issue([sample_envelope(0)])
    assert (ledger_dir / "axiom_ledger.jsonl").read_bytes()


def test_crovia_seal_with_another_key_exits_2(filled: Path, key, tmp_path, capsys) -> None:
    other_file = tmp_path / "other.key"
    other = generate_signing_key(other_file)
    before = snapshot(filled)
    assert main(["seal", "--ledger-dir", str(filled), "--key", str(other_file)]) == 2
    err = capsys.readouterr().err
    assert kid(key) in err and kid(other) in err and "Traceback" not in err
    assert snapshot(filled) == before
