"""No command writes over an existing file without --force, nor over a key file even with it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.keys import generate_signing_key, key_id
from ledger.store import Ledger
from tests.crawl import crovia
from tests.vectors.make_vectors import sample_envelope


@pytest.fixture
def sealed(tmp_path: Path) -> tuple[Path, Path, str]:
    """The key at tmp/data/keys/signing.key, a sealed ledger it signed, and one axiom id."""
    key_file, ledger_dir = tmp_path / "data" / "keys" / "signing.key", tmp_path / "ledger"
    key = generate_signing_key(key_file)
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        axiom_id = ledger.issue([sample_envelope(0)])[0].axiom_id
        ledger.seal()
    return key_file, ledger_dir, axiom_id


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_prove_out_over_the_signing_key_is_refused(sealed, tmp_path: Path, force) -> None:
    """The issue's case, as a user types it: the key stays as it was, --force or not."""
    key_file, ledger_dir, axiom_id = sealed
    before = _digest(key_file)
    proc = crovia(tmp_path, "prove", axiom_id, "--ledger-dir", str(ledger_dir))
    assert proc.returncode == 0
    args = ["prove", axiom_id, "--ledger-dir", str(ledger_dir), "--out", str(key_file), *force]
    proc = crovia(tmp_path, *args)
    assert proc.returncode == 2
    assert f"{key_file} is a key file" in proc.stderr and "Traceback" not in proc.stderr
    assert _digest(key_file) == before
    assert (key_file.stat().st_mode & 0o777) == 0o600


def test_prove_out_refuses_an_existing_file_unless_forced(sealed, tmp_path: Path, capsys) -> None:
    _key_file, ledger_dir, axiom_id = sealed
    out = tmp_path / "receipt.json"
    out.write_text("keep me")
    args = ["prove", axiom_id, "--ledger-dir", str(ledger_dir), "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{out} exists" in err and "--force" in err
    assert out.read_text() == "keep me"
    assert main([*args, "--force"]) == 0
    assert json.loads(out.read_bytes())["axiom_id"] == axiom_id
    fresh = tmp_path / "new.json"
    assert main([*args[:-1], str(fresh)]) == 0
    assert fresh.read_bytes() == out.read_bytes()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("anything.json", "ab" * 32 + "\n"),  # a crovia key file, whatever its name
        ("notes.txt", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...\n"),
        ("old.key", "not a key at all, but named like one"),
        ("server.pem", "certificate, or a private key: never guessed"),
    ],
)
def test_a_key_file_is_never_overwritten_even_forced(
    sealed, tmp_path: Path, name: str, content: str, capsys
) -> None:
    _key_file, ledger_dir, axiom_id = sealed
    target = tmp_path / name
    target.write_text(content)
    args = ["prove", axiom_id, "--ledger-dir", str(ledger_dir), "--out", str(target), "--force"]
    assert main(args) == 2
    assert "is a key file" in capsys.readouterr().err
    assert target.read_text() == content


def test_a_link_to_the_key_is_the_key(sealed, tmp_path: Path, capsys) -> None:
    key_file, ledger_dir, axiom_id = sealed
    link = tmp_path / "receipt.json"
    link.symlink_to(key_file)
    before = _digest(key_file)
    args = ["prove", axiom_id, "--ledger-dir", str(ledger_dir), "--out", str(link), "--force"]
    assert main(args) == 2
    assert _digest(key_file) == before and link.is_symlink()


def test_keygen_trust_root_refuses_an_existing_file_and_writes_no_key(tmp_path, capsys) -> None:
    trust = tmp_path / "trust_root.json"
    trust.write_text('{"published": "earlier"}\n')
    key_file = tmp_path / "k" / "signing.key"
    assert main(["keygen", "--out", str(key_file), "--trust-root", str(trust)]) == 2
    assert f"{trust} exists" in capsys.readouterr().err
    assert trust.read_text() == '{"published": "earlier"}\n'
    assert not key_file.exists()  # refused before anything was written
    assert main(["keygen", "--out", str(key_file), "--trust-root", str(trust), "--force"]) == 0
    written = json.loads(trust.read_text())
    assert written["key_id"] == key_id(bytes.fromhex(written["public_key_hex"]))


def test_keygen_out_never_overwrites_even_forced(tmp_path: Path, capsys) -> None:
    existing = tmp_path / "receipt.json"
    existing.write_text("{}")
    assert main(["keygen", "--out", str(existing), "--force"]) == 2
    assert existing.read_text() == "{}"


def test_keygen_trust_root_over_a_key_is_refused_even_forced(tmp_path: Path, capsys) -> None:
    old = tmp_path / "old.key"
    generate_signing_key(old)
    before = _digest(old)
    new = tmp_path / "new.key"
    assert main(["keygen", "--out", str(new), "--trust-root", str(old), "--force"]) == 2
    assert _digest(old) == before and not new.exists()
