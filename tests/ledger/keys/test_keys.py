"""Key files: 0600, never overwritten; loose, missing or corrupt files refused; no leaks."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.exceptions import KeyFileError
from ledger.keys import KeyContext, generate_signing_key, key_id, load_signing_key


def test_a_new_key_file_is_0600_and_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "nested" / "signing.key"
    key = generate_signing_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().startswith("-----BEGIN PRIVATE KEY-----\n")  # PKCS#8, typed
    assert bytes(load_signing_key(path)) == bytes(key)
    # the raw format of old (the seed as 64 hex and a newline) still loads, for a ledger it signs
    raw = tmp_path / "raw.key"
    raw.write_text(bytes(key).hex() + "\n")
    raw.chmod(0o600)
    signs = KeyContext("its ledger", lambda public: public == bytes(key.verify_key))
    assert bytes(load_signing_key(raw, context=signs, notice=lambda _: None)) == bytes(key)


def test_the_file_is_0600_even_under_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = tmp_path / "signing.key"
        generate_signing_key(path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "signing.key"
    path.write_text("precious\n")
    with pytest.raises(KeyFileError, match="refusing to overwrite"):
        generate_signing_key(path)
    assert path.read_text() == "precious\n"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602])
def test_a_key_others_can_access_is_refused_with_the_fix(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "signing.key"
    key = generate_signing_key(path)
    path.chmod(mode)
    with pytest.raises(KeyFileError) as caught:
        load_signing_key(path)
    assert f"chmod 600 {path}" in str(caught.value)
    assert bytes(key).hex() not in str(caught.value)


@pytest.mark.parametrize("content", ["", "zz" * 32 + "\n", "ab" * 31 + "\n", "ab" * 33 + "\n"])
def test_a_corrupt_key_file_is_refused_without_echoing_it(tmp_path: Path, content: str) -> None:
    path = tmp_path / "signing.key"
    path.write_text(content)
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match="not a crovia key file") as caught:
        load_signing_key(path)
    assert not content.strip() or content.strip() not in str(caught.value)


def test_a_missing_key_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="crovia keygen"):
        load_signing_key(tmp_path / "absent.key")


def test_key_id_is_the_first_16_hex_of_sha256_of_the_public_key() -> None:
    public = bytes.fromhex("cf742e26f75669dc673cb5c0786a1ae23ae8ca19c347317192ce40c28a7ff25c")
    assert key_id(public) == "430895f101d38164"  # the seed receipt's key
    assert key_id(public) == hashlib.sha256(public).hexdigest()[:16]


def test_keygen_prints_the_public_side_only(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path, trust_root = tmp_path / "k" / "signing.key", tmp_path / "trust_root.json"
    assert main(["keygen", "--out", str(path), "--trust-root", str(trust_root)]) == 0
    out = capsys.readouterr()
    secret = path.read_text().strip()
    public = bytes(load_signing_key(path).verify_key)
    assert secret not in out.out + out.err
    assert public.hex() in out.out and key_id(public) in out.out and "secret" in out.out
    assert trust_root.read_text().count(public.hex()) == 1
    assert main(["keygen", "--out", str(path)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
