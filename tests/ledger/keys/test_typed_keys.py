"""Typed key files: a signing key file says it is one (PKCS#8 PEM), and a public key never signs.

Issue 33, observation 1: `crovia pubkey --key data/demo/public_key.hex` asked for `chmod 600`, then
read the public key's 32 bytes as a private seed. Here every public form is refused as a public
key, a raw 64-hex file loads only for a ledger that already signs with it, and nothing random
loads but a valid typed key.
"""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
from pathlib import Path

import nacl.signing
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crovia_spider.config.trust_roots import trust_root, trust_root_text
from ledger.exceptions import KeyFileError
from ledger.keys import convert_key_file, generate_signing_key, key_id, load_signing_key
from ledger.store import Ledger, note_verifier_key
from ledger.store.writer_key import ledger_key_context
from tests.vectors.make_vectors import sample_envelope

PUBLIC = "holds a public key, not a signing key"


def write(path: Path, content: str | bytes, mode: int = 0o600) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    path.chmod(mode)
    return path


def raw(path: Path, key: nacl.signing.SigningKey) -> Path:
    """A key file as crovia wrote them before typed keys: the seed as 64 hex and a newline."""
    return write(path, bytes(key).hex() + "\n")


def sealed(directory: Path, key: nacl.signing.SigningKey, *, seal: bool = True) -> Path:
    with Ledger.open(directory, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(3)])
        if seal:
            ledger.seal(run_id="t")
    return directory


def snapshot(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_a_new_key_is_pkcs8_pem_that_openssl_and_cryptography_read(tmp_path: Path) -> None:
    path = tmp_path / "signing.key"
    key = generate_signing_key(path)
    text = path.read_text()
    assert text.startswith("-----BEGIN PRIVATE KEY-----\n")
    assert text.endswith("-----END PRIVATE KEY-----\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    proc = subprocess.run(
        ["openssl", "pkey", "-in", str(path), "-noout", "-text"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "ED25519 Private-Key" in proc.stdout
    parsed = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(parsed, Ed25519PrivateKey)
    public = parsed.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert public == bytes(key.verify_key) == bytes(load_signing_key(path).verify_key)
    assert [p.name for p in tmp_path.iterdir()] == ["signing.key"]  # no temporary file left


def test_a_key_openssl_made_loads(tmp_path: Path) -> None:
    path = tmp_path / "openssl.key"
    made = subprocess.run(
        ["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], capture_output=True
    )
    assert made.returncode == 0, made.stderr
    path.chmod(0o600)
    out = subprocess.run(["openssl", "pkey", "-in", str(path), "-pubout", "-outform", "DER"],
                         capture_output=True)  # fmt: skip
    assert bytes(load_signing_key(path).verify_key) == out.stdout[-32:]


def public_forms(tmp_path: Path) -> dict[str, str]:
    key = nacl.signing.SigningKey.generate()
    public = bytes(key.verify_key)
    pem = (
        Ed25519PrivateKey.from_private_bytes(bytes(key))
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return {
        "hex": public.hex() + "\n",
        "pem": pem.decode(),
        "trust_root": trust_root_text(trust_root(public, None, rotations=[])),
        "note_verifier_key": note_verifier_key(public, "crovia.local/x") + "\n",
    }


@pytest.mark.parametrize("form", ["hex", "pem", "trust_root", "note_verifier_key"])
@pytest.mark.parametrize("mode", [0o600, 0o644])
def test_a_public_key_file_is_refused_as_one(tmp_path: Path, form: str, mode: int) -> None:
    content = public_forms(tmp_path)[form]
    path = write(tmp_path / "public.key", content, mode)
    with pytest.raises(KeyFileError) as caught:
        load_signing_key(path)
    message = str(caught.value)
    assert "public key" in message and "not a signing key" in message, message
    if form != "hex":  # 64 hex alone could also be a raw seed of old: said so, below
        assert PUBLIC in message
    assert "chmod" not in message  # a public key needs no chmod: it must not sign at all


def test_the_ledgers_own_public_key_is_named_as_such(tmp_path: Path) -> None:
    key = nacl.signing.SigningKey.generate()
    ledger = sealed(tmp_path / "ledger", key)
    path = write(tmp_path / "public_key.hex", bytes(key.verify_key).hex() + "\n")
    with pytest.raises(KeyFileError) as caught:
        load_signing_key(path, context=ledger_key_context(ledger))
    assert PUBLIC in str(caught.value)
    assert key_id(bytes(key.verify_key)) in str(caught.value)


@pytest.mark.parametrize("seal", [True, False], ids=["sealed", "leaf-0-only"])
def test_a_raw_key_loads_for_a_ledger_it_signs_with_a_notice(tmp_path: Path, seal: bool) -> None:
    key = nacl.signing.SigningKey.generate()
    ledger = sealed(tmp_path / "ledger", key, seal=seal)
    path = raw(tmp_path / "signing.key", key)
    notices: list[str] = []
    loaded = load_signing_key(path, context=ledger_key_context(ledger), notice=notices.append)
    assert bytes(loaded) == bytes(key)
    assert len(notices) == 1 and "\n" not in notices[0]
    assert f"crovia keygen --convert {path}" in notices[0]
    assert bytes(key).hex() not in notices[0]


def test_a_raw_key_of_a_rotated_ledger_loads_old_and_new(tmp_path: Path) -> None:
    old, new = nacl.signing.SigningKey.generate(), nacl.signing.SigningKey.generate()
    ledger = sealed(tmp_path / "ledger", old)
    with Ledger.open(ledger, signing_key=old) as writer:
        writer.rotate_key(new)
    for name, key in (("old.key", old), ("new.key", new)):
        loaded = load_signing_key(
            raw(tmp_path / name, key), context=ledger_key_context(ledger), notice=lambda _: None
        )
        assert bytes(loaded) == bytes(key)


@pytest.mark.parametrize("where", ["absent", "empty", "another"])
def test_a_raw_key_for_a_new_or_other_ledger_is_refused(tmp_path: Path, where: str) -> None:
    ledger = tmp_path / "ledger"
    if where == "empty":
        ledger.mkdir()
    elif where == "another":
        sealed(ledger, nacl.signing.SigningKey.generate())
    key = nacl.signing.SigningKey.generate()
    path = raw(tmp_path / "signing.key", key)
    for context in (None, ledger_key_context(ledger)):
        with pytest.raises(KeyFileError) as caught:
            load_signing_key(path, context=context, notice=pytest.fail)
        assert "not a signing key" in str(caught.value)
        assert f"crovia keygen --convert {path}" in str(caught.value)
        assert bytes(key).hex() not in str(caught.value)


def test_convert_keeps_the_key_and_no_ledger_byte(tmp_path: Path) -> None:
    key = nacl.signing.SigningKey.generate()
    ledger = sealed(tmp_path / "ledger", key)
    before = snapshot(ledger)
    path = raw(tmp_path / "signing.key", key)
    done = convert_key_file(path, context=ledger_key_context(ledger))
    assert done == (bytes(key.verify_key), True)
    assert path.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert bytes(load_signing_key(path)) == bytes(key)  # typed: no context needed any more
    assert snapshot(ledger) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger", "signing.key"]
    typed = path.read_bytes()
    assert convert_key_file(path, context=ledger_key_context(ledger)) == (done.public_key, False)
    assert path.read_bytes() == typed


def test_convert_refuses_a_public_key_and_leaves_it(tmp_path: Path) -> None:
    key = nacl.signing.SigningKey.generate()
    ledger = sealed(tmp_path / "ledger", key)
    path = write(tmp_path / "public_key.hex", bytes(key.verify_key).hex() + "\n")
    with pytest.raises(KeyFileError, match=PUBLIC):
        convert_key_file(path, context=ledger_key_context(ledger))
    assert path.read_text() == bytes(key.verify_key).hex() + "\n"


def test_other_private_keys_are_refused_without_echo(tmp_path: Path) -> None:
    ec_key = ec.generate_private_key(ec.SECP256R1())
    plain = ec_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path = write(tmp_path / "ec.key", plain)
    with pytest.raises(KeyFileError, match="not an Ed25519"):
        load_signing_key(path)
    encrypted = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    )
    path = write(tmp_path / "enc.key", encrypted)
    with pytest.raises(KeyFileError, match="encrypted") as caught:
        load_signing_key(path)
    assert encrypted.decode().splitlines()[1] not in str(caught.value)


def test_a_pem_with_anything_around_it_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "good.key"
    generate_signing_key(source)
    for extra in ("junk\n{}", "{}-----BEGIN PRIVATE KEY-----\n"):
        path = write(tmp_path / "bad.key", extra.format(source.read_text()))
        with pytest.raises(KeyFileError, match="not a crovia key file"):
            load_signing_key(path)


def test_a_trust_root_with_rotations_is_still_a_public_key(tmp_path: Path) -> None:
    root = json.loads(public_forms(tmp_path)["trust_root"])
    root["key_rotations"] = [{"x": "y" * 100}] * 50
    path = write(tmp_path / "trust_root.json", json.dumps(root))
    with pytest.raises(KeyFileError, match=PUBLIC):
        load_signing_key(path)


_VALID = Ed25519PrivateKey.from_private_bytes(bytes(range(32))).private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
)


@st.composite
def key_file_bytes(draw: st.DrawFn) -> bytes:
    """Random bytes, random text, and the valid typed key with one byte changed or cut."""
    kind = draw(st.sampled_from(["bytes", "text", "hex", "mutated", "cut"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "text":
        return draw(st.text(max_size=200)).encode("utf-8")
    if kind == "hex":
        return draw(st.text("0123456789abcdefABCDEF \n", min_size=60, max_size=70)).encode()
    index = draw(st.integers(0, len(_VALID) - 1))
    if kind == "cut":
        return _VALID[:index]
    return _VALID[:index] + bytes([draw(st.integers(0, 255))]) + _VALID[index + 1 :]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=key_file_bytes())
def test_random_bytes_never_load_unless_a_valid_typed_key(tmp_path: Path, content: bytes) -> None:
    path = write(tmp_path / "fuzz.key", content)
    try:
        key = load_signing_key(path, notice=pytest.fail)
    except KeyFileError:
        return
    parsed = serialization.load_pem_private_key(content, password=None)
    assert isinstance(parsed, Ed25519PrivateKey)
    assert content.strip().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert bytes(key) == parsed.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def test_a_key_openssl_refuses_with_an_internal_error_is_a_key_file_error(tmp_path: Path) -> None:
    """Byte 43 of a valid key set to "v": OpenSSL fails "key setup" with InternalError, not
    ValueError (found by the property test above): a clear refusal all the same."""
    path = write(tmp_path / "damaged.key", _VALID[:43] + b"v" + _VALID[44:])
    with pytest.raises(KeyFileError, match="an unreadable PRIVATE KEY"):
        load_signing_key(path, notice=pytest.fail)
