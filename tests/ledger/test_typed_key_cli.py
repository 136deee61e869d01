"""Typed key files at the command line (issue 33, observation 1), through `crovia` and a crawl.

A public key given where a signing key is wanted is refused as a public key (exit 2 for crovia,
`crawl refused` for a crawl) and no ledger comes of it; a raw key of old still signs the ledger it
signs, with a notice naming `crovia keygen --convert`, which converts it in place.
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from ledger.keys import key_id, load_signing_key
from tests.crawl import crawl_env, run_crawl
from tests.ledger.keys.test_typed_keys import raw, sealed, snapshot, write

PUBLIC = "holds a public key, not a signing key"


def test_the_observation_a_public_key_hex_never_signs(tmp_path: Path, capsys, feed_server) -> None:
    key = nacl.signing.SigningKey.generate()
    ledger = sealed(tmp_path / "demo" / "ledger", key)
    public_file = write(tmp_path / "demo" / "public_key.hex", bytes(key.verify_key).hex() + "\n")
    public_file.chmod(0o644)  # as the demo writes it: pubkey asked for chmod 600 here
    new_ledger = tmp_path / "new" / "ledger"
    assert main(["pubkey", "--key", str(public_file), "--ledger-dir", str(new_ledger)]) == 2
    err = capsys.readouterr().err
    assert "public key" in err and "not a signing key" in err and "chmod" not in err
    public_file.chmod(0o600)  # what the old message said to do
    assert main(["pubkey", "--key", str(public_file), "--ledger-dir", str(new_ledger)]) == 2
    err = capsys.readouterr().err
    assert "public key" in err and "not a signing key" in err
    assert main(["pubkey", "--key", str(public_file), "--ledger-dir", str(ledger)]) == 2
    assert PUBLIC in capsys.readouterr().err  # its own ledger names it: the key of its seals
    before = snapshot(ledger)
    assert main(["seal", "--key", str(public_file), "--ledger-dir", str(ledger)]) == 2
    assert PUBLIC in capsys.readouterr().err and snapshot(ledger) == before

    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    env = crawl_env(tmp_path / "new", CROVIA_SIGNING_KEY_FILE=str(public_file))
    proc = run_crawl(tmp_path / "new", feeds, env=env)
    assert proc.returncode != 0
    assert "crawl refused" in proc.stderr and "not a signing key" in proc.stderr
    assert not new_ledger.exists()  # no ledger under a key whose private half is public
    assert feed_server.requests == []


def test_keygen_writes_what_openssl_reads(tmp_path: Path, capsys) -> None:
    path = tmp_path / "signing.key"
    assert main(["keygen", "--out", str(path)]) == 0
    out = capsys.readouterr().out
    assert subprocess.run(["openssl", "pkey", "-in", str(path), "-noout"]).returncode == 0
    assert "PRIVATE KEY" not in out and path.read_text().splitlines()[1] not in out


def test_a_raw_key_signs_its_ledger_with_a_notice_then_converts(tmp_path: Path, capsys) -> None:
    key = nacl.signing.SigningKey.generate()
    ledger = sealed(tmp_path / "ledger", key, seal=False)
    path = raw(tmp_path / "signing.key", key)
    assert main(["seal", "--key", str(path), "--ledger-dir", str(ledger)]) == 0
    err = capsys.readouterr().err
    notices = [line for line in err.splitlines() if "--convert" in line]
    assert len(notices) == 1 and f"crovia keygen --convert {path}" in notices[0]
    assert bytes(key).hex() not in err

    before = snapshot(ledger)
    argv = ["keygen", "--convert", str(path), "--ledger-dir", str(ledger)]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert key_id(bytes(key.verify_key)) in out and bytes(key).hex() not in out + err
    assert path.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert bytes(load_signing_key(path)) == bytes(key)
    assert snapshot(ledger) == before
    assert main(argv) == 0  # a typed key: nothing to do, said so
    assert "already" in capsys.readouterr().out
    assert main(["seal", "--key", str(path), "--ledger-dir", str(ledger)]) == 0
    assert "--convert" not in capsys.readouterr().err


def test_convert_by_public_key_for_a_key_no_ledger_names(tmp_path: Path, capsys) -> None:
    key = nacl.signing.SigningKey.generate()
    path = raw(tmp_path / "witness.key", key)
    other = nacl.signing.SigningKey.generate()
    wrong = ["keygen", "--convert", str(path), "--public-key", bytes(other.verify_key).hex()]
    assert main(wrong) == 2
    assert "not a signing key" in capsys.readouterr().err
    assert path.read_text() == bytes(key).hex() + "\n"
    right = ["keygen", "--convert", str(path), "--public-key", bytes(key.verify_key).hex()]
    assert main(right) == 0
    assert bytes(load_signing_key(path)) == bytes(key)


def test_convert_refuses_a_public_key_file_and_a_new_ledger(tmp_path: Path, capsys) -> None:
    key = nacl.signing.SigningKey.generate()
    public_file = write(tmp_path / "public_key.hex", bytes(key.verify_key).hex() + "\n")
    raw_file = raw(tmp_path / "old.key", nacl.signing.SigningKey.generate())
    for path in (public_file, raw_file):
        content = path.read_bytes()
        argv = ["keygen", "--convert", str(path), "--ledger-dir", str(tmp_path / "none")]
        assert main(argv) == 2
        assert "not a signing key" in capsys.readouterr().err
        assert path.read_bytes() == content


def test_a_raw_key_starts_no_new_ledger(tmp_path: Path, feed_server) -> None:
    (tmp_path / "keys").mkdir()
    key_file = raw(tmp_path / "keys" / "signing.key", nacl.signing.SigningKey.generate())
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    proc = run_crawl(tmp_path, feeds, env=crawl_env(tmp_path))
    assert proc.returncode != 0 and "crawl refused" in proc.stderr
    assert f"crovia keygen --convert {key_file}" in proc.stderr
    assert not (tmp_path / "ledger").exists()


@pytest.mark.parametrize("flags", [[], ["--out", "x.key"]])
def test_convert_and_out_are_one_or_the_other(tmp_path: Path, flags: list[str], capsys) -> None:
    argv = ["keygen", *flags]
    if flags:
        argv += ["--convert", str(tmp_path / "k")]
    assert main(argv) == 2
    assert "--out" in capsys.readouterr().err


def test_a_crawl_with_the_raw_key_of_its_ledger_goes_on_with_the_notice(
    tmp_path: Path, feed_server
) -> None:
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    assert run_crawl(tmp_path, feeds).returncode == 0
    key = load_signing_key(tmp_path / "keys" / "signing.key")
    key_file = raw(tmp_path / "raw.key", key)
    proc = run_crawl(
        tmp_path, feeds, env=crawl_env(tmp_path, CROVIA_SIGNING_KEY_FILE=str(key_file))
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    notices = [line for line in proc.stderr.splitlines() if "--convert" in line]
    assert len(notices) == 1 and f"crovia keygen --convert {key_file}" in notices[0]
    assert bytes(key).hex() not in proc.stderr
