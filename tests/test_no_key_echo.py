"""Issue 43, observation 8: a private key typed as `--pubkey` was echoed in full on stderr (an easy
slip after the README's `--pubkey "$(cat ...)"` line), where CI logs and scrollback keep it.

Nothing prints key material, whatever was typed where: every option that takes a key, a pin or a
key's file, and a command's file arguments, are given a PEM private key, a raw seed (64 hex, which
looks exactly like a public key), a seed with its public key (128 hex), a note signing key and a
base64 seed, in both `--opt VALUE` and `--opt=VALUE` forms, with and without `--json`; a key
file's path where another file is expected is held to the same. Neither stdout nor stderr may hold
the key, in any case or in part. A PEM block or a note signing key is refused before anything runs.
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.keys import generate_signing_key
from tests.crawl import BIN, PROJECT_ROOT

RECEIPT = "/work/shared/spec/seed_axiom_proof.json"
SEED = bytes(range(7, 39)).hex()  # 64 hex digits: a raw private seed
PUBLIC_LIKE_SEED = SEED.upper()
PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIH4EFEPIP6CdIAxS+CoJvniNaxmtMR6qSCslPLxHzzAZ\n"
    "-----END PRIVATE KEY-----"
)
SIGNER = "PRIVATE+KEY+example.org/log+0a1b2c3d+" + base64.b64encode(b"\x01" + bytes(32)).decode()
B64_SEED = base64.b64encode(bytes(range(100, 132))).decode()
SECRETS = {
    "pem": PEM,
    "seed": SEED,
    "SEED": PUBLIC_LIKE_SEED,
    "seed+public": SEED + bytes(range(40, 72)).hex(),
    "note signer": SIGNER,
    "base64 seed": B64_SEED,
}
# Every option that takes a key, a pin or a key's file, and file arguments ({s}: the secret).
COMMANDS = {
    "verify --pubkey": ["verify", RECEIPT, "--pubkey", "{s}"],
    "verify --key-id": ["verify", RECEIPT, "--key-id", "{s}"],
    "verify RECEIPT": ["verify", "{s}"],
    "verify --trust-root": ["verify", RECEIPT, "--trust-root", "{s}"],
    "verify --rotations": ["verify", RECEIPT, "--rotations", "{s}"],
    "verify --tsa-root": ["verify", RECEIPT, "--tsa-root", "{s}"],
    "verify --bitcoin-header": ["verify", RECEIPT, "--bitcoin-header", "{s}"],
    "audit --pubkey": ["audit", "--ledger-dir", "{tmp}", "--pubkey", "{s}"],
    "monitor --vkey": ["monitor", "{tmp}", "--vkey", "{s}"],
    "monitor --witness": [
        "monitor",
        "{tmp}",
        "--vkey",
        "example.org+00000000+AQ==",
        "--witness",
        "{s}",
    ],
    "witness serve --key": ["witness", "serve", "--key", "{s}", "--log", "{s}"],
    "worker --sequencer-key": [
        "worker",
        "--redis",
        "redis://127.0.0.1:1/0",
        "--sequencer-key",
        "{s}",
    ],
    "sequencer --job-key": ["sequencer", "--redis", "redis://127.0.0.1:1/0", "--job-key", "{s}"],
    "keygen --convert": ["keygen", "--convert", "{s}"],
    "keygen --public-key": ["keygen", "--convert", "{tmp}/raw.key", "--public-key", "{s}"],
    "pubkey --key": ["pubkey", "--key", "{s}"],
    "seal --key": ["seal", "--ledger-dir", "{tmp}", "--key", "{s}"],
    "rotate-key --new-key": ["rotate-key", "--ledger-dir", "{tmp}", "--new-key", "{s}"],
    "body AXIOM_ID": ["body", "{s}", "--ledger-dir", "{tmp}"],
    "an option's place": ["verify", RECEIPT, "{s}"],
}


def pieces(secret: str) -> list[str]:
    """What must not appear: the secret, any PEM line of it, its hex in either case, and any 24
    characters of it in a row."""
    found = {secret, secret.lower(), secret.upper()}
    found |= {line for line in secret.splitlines() if len(line) > 30 and "-----" not in line}
    found |= {secret[i : i + 24] for i in range(0, max(1, len(secret) - 23), 8)}
    return sorted(found)


def argv_of(template: list[str], secret: str, tmp_path: Path, joined: bool) -> list[str]:
    argv = [part.replace("{s}", secret).replace("{tmp}", str(tmp_path)) for part in template]
    if joined:  # --opt=VALUE
        for i, part in enumerate(argv[:-1]):
            if part.startswith("--") and secret in argv[i + 1]:
                argv[i : i + 2] = [f"{part}={argv[i + 1]}"]
                break
    return argv


@pytest.mark.parametrize("secret", sorted(SECRETS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_prints_a_key_typed_in_any_place(tmp_path, capsys, command, secret):
    value = SECRETS[secret]
    for joined in (False, True):
        for extra in ([], ["--json"]):
            argv = argv_of(COMMANDS[command], value, tmp_path, joined) + extra
            code = main(argv)
            out, err = capsys.readouterr()
            assert code in (1, 2), (argv, out, err)
            for piece in pieces(value):
                assert piece not in out and piece not in err, (argv, out, err)


@pytest.mark.parametrize("secret", ["pem", "note signer"])
def test_a_private_key_typed_anywhere_is_refused_before_anything_runs(tmp_path, capsys, secret):
    code = main(["seal", "--ledger-dir", str(tmp_path / "ledger"), "--run-id", SECRETS[secret]])
    _out, err = capsys.readouterr()
    assert code == 2
    assert "a private key was typed on the command line" in err and "not shown" in err
    assert not (tmp_path / "ledger").exists()  # nothing ran


def test_a_public_key_typed_is_still_shown_where_it_is_the_answer(tmp_path, capsys):
    """The redaction is for what was typed: a derived public key, printed as a result, stays."""
    key_file = tmp_path / "signing.key"
    public = bytes(generate_signing_key(key_file).verify_key).hex()
    assert main(["pubkey", "--key", str(key_file), "--ledger-dir", str(tmp_path / "none")]) == 0
    assert public in capsys.readouterr().out


def test_a_key_files_contents_are_never_printed_where_another_file_was_expected(tmp_path, capsys):
    key_file = tmp_path / "signing.key"
    generate_signing_key(key_file)
    body = [line for line in key_file.read_text().splitlines() if "-----" not in line]
    for argv in (
        ["verify", str(key_file)],
        ["verify", RECEIPT, "--trust-root", str(key_file)],
        ["verify", RECEIPT, "--rotations", str(key_file)],
        ["verify", RECEIPT, "--tsa-root", str(key_file)],
        ["monitor", str(key_file), "--vkey", "example.org+00000000+AQ=="],
        ["feeds", "check", "--feeds-file", str(key_file)],
        ["schedule", "--list", "--config", str(key_file)],
        ["feeds", "import-opml", str(key_file), "--feeds-file", str(tmp_path / "f.toml")],
    ):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code in (1, 2), (argv, out, err)
        assert not any(line in out or line in err for line in body), (argv, out, err)


def test_the_readme_slip_in_a_shell_prints_no_key(tmp_path):
    """The slip as typed: `--pubkey "$(cat data/keys/signing.key)"`, both key formats, in a real
    shell; whatever the interpreter prints too (a traceback included) holds no key."""
    pem_key = tmp_path / "signing.key"
    generate_signing_key(pem_key)
    raw_key = tmp_path / "raw.key"
    raw_key.write_text(SEED + "\n")
    for key in (pem_key, raw_key):
        shown = subprocess.run(
            ["bash", "-c", f'"$0" verify {RECEIPT} --pubkey "$(cat {key})"', str(BIN / "crovia")],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert shown.returncode in (1, 2), shown.stderr
        for line in key.read_text().splitlines():
            if "-----" not in line:
                assert line not in shown.stdout + shown.stderr
                assert line.lower() not in (shown.stdout + shown.stderr).lower()
