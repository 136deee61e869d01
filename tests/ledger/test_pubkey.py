"""`crovia pubkey`: the public key and key id of an existing key, and its trust root."""

from __future__ import annotations

import json
from pathlib import Path

from crovia_spider.cli import main
from ledger.keys import generate_signing_key, key_id


def test_pubkey_prints_the_key_and_writes_the_keygen_trust_root(tmp_path: Path, capsys) -> None:
    made = tmp_path / "made.json"
    key_file = tmp_path / "signing.key"
    assert main(["keygen", "--out", str(key_file), "--trust-root", str(made)]) == 0
    capsys.readouterr()
    again = tmp_path / "again.json"
    assert main(["pubkey", "--key", str(key_file), "--trust-root", str(again)]) == 0
    out = capsys.readouterr().out
    trust = json.loads(made.read_text())
    assert again.read_bytes() == made.read_bytes()  # the same format, byte for byte
    assert trust["public_key_hex"] in out and f"key_id:     {trust['key_id']}" in out
    assert str(again) in out


def test_pubkey_json_and_the_default_key(tmp_path: Path, monkeypatch, capsys) -> None:
    key_file = tmp_path / "signing.key"
    public = bytes(generate_signing_key(key_file).verify_key)
    monkeypatch.setenv("CROVIA_SIGNING_KEY_FILE", str(key_file))
    assert main(["pubkey", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["public_key_hex"] == public.hex() and shown["key_id"] == key_id(public)
    assert shown["signature_algorithm"] == "ed25519" and shown["trust_root_file"] is None
    assert key_file.read_text().strip() not in json.dumps(shown)  # never the private seed


def test_pubkey_refuses_to_overwrite_and_a_loose_key(tmp_path: Path, capsys) -> None:
    key_file = tmp_path / "signing.key"
    generate_signing_key(key_file)
    out = tmp_path / "trust_root.json"
    out.write_text("older")
    assert main(["pubkey", "--key", str(key_file), "--trust-root", str(out)]) == 2
    assert out.read_text() == "older"
    assert main(["pubkey", "--key", str(key_file), "--trust-root", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["key_id"]
    assert main(["pubkey", "--key", str(key_file), "--trust-root", str(key_file), "--force"]) == 2
    key_file.chmod(0o644)
    assert main(["pubkey", "--key", str(key_file)]) == 2
    assert f"chmod 600 {key_file}" in capsys.readouterr().err
    assert main(["pubkey", "--key", str(tmp_path / "missing.key")]) == 2
