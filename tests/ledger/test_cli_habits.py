"""Command-line habits (issue 17): a closed pipe ends a command quietly, a misspelt command gets a
suggestion, `crovia seal` with nothing to seal is not an error, `crovia prove` at a terminal
prints a summary instead of 7 KB of JSON."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from ledger.keys import generate_signing_key
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope

BIN = Path(sys.executable).parent
PROJECT = Path(__file__).parents[2]


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "keys" / "signing.key"
    generate_signing_key(path)
    return path


@pytest.fixture
def key(key_file: Path) -> nacl.signing.SigningKey:
    from ledger.keys import load_signing_key

    return load_signing_key(key_file)


@pytest.fixture
def many(tmp_path: Path, key: nacl.signing.SigningKey) -> Path:
    """A sealed ledger big enough that its listing does not fit in a pipe's buffer."""
    directory = tmp_path / "ledger"
    with Ledger.open(directory, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(600)])
        ledger.seal()
    return directory


def _env(tmp_path: Path, ledger_dir: Path) -> dict[str, str]:
    feeds = tmp_path / "feeds.toml"
    if not feeds.exists():
        feeds.write_text(
            "".join(
                f'[[feeds]]\nvendor = "v{n}"\nurl = "https://example.org/{n}.xml"\n'
                for n in range(2000)
            )
        )
    return {
        **os.environ,
        "CROVIA_LEDGER_DIR": str(ledger_dir),
        "CROVIA_FEEDS_FILE": str(feeds),
    }


@pytest.mark.parametrize(
    "argv",
    [["find"], ["find", "--json"], ["find", "--ids"], ["feeds", "list", "--json"]],
    ids=" ".join,
)
def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path, many: Path, argv: list[str]):
    # `crovia ... | head -1`: the reader goes away after one line.
    cmd = f"{BIN / 'crovia'} {' '.join(argv)} | head -c 1 >/dev/null; exit ${{PIPESTATUS[0]}}"
    proc = subprocess.run(
        ["bash", "-c", cmd], env=_env(tmp_path, many), capture_output=True, text=True, timeout=60
    )
    assert proc.stderr == ""
    assert proc.returncode != 2


def test_a_misspelt_command_gets_a_suggestion(capsys):
    assert main(["verfy", "receipt.json"]) == 2
    assert "did you mean 'verify'?" in capsys.readouterr().err
    assert main(["feeds", "lst"]) == 2
    assert "did you mean 'list'?" in capsys.readouterr().err


def test_seal_with_nothing_new_exits_0_in_one_line(many: Path, key_file: Path, capsys) -> None:
    assert main(["seal", "--ledger-dir", str(many), "--key", str(key_file)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.count("\n") == 1 and "no new leaves since the last seal" in captured.out


def test_seal_of_an_empty_ledger_exits_0_in_one_line(tmp_path: Path, key, key_file, capsys):
    empty = tmp_path / "empty"
    with Ledger.open(empty, signing_key=key):
        pass  # a writer opened it (an offline crawl that issued nothing)
    assert main(["seal", "--ledger-dir", str(empty), "--key", str(key_file)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.count("\n") == 1 and "nothing to seal" in captured.out


def _run_on_a_terminal(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run `crovia ARGV` with stdout and stderr on a pseudo-terminal; its exit code and output."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(BIN / "crovia"), *argv], stdout=follower, stderr=follower, env=env, cwd=cwd
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode()


def test_prove_at_a_terminal_prints_a_summary_and_how_to_write_the_file(
    tmp_path: Path, many: Path
) -> None:
    axiom_id = json.loads((many / "axiom_ledger.jsonl").read_text().splitlines()[3])["axiom_id"]
    env = _env(tmp_path, many)
    code, out = _run_on_a_terminal(["prove", axiom_id], env, tmp_path)
    assert code == 0
    assert len(out) < 1000 and '"schema"' not in out
    assert axiom_id in out and "--out" in out
    # Piped, it writes the receipt, byte for byte.
    piped = subprocess.run(
        [str(BIN / "crovia"), "prove", axiom_id], env=env, capture_output=True, timeout=60
    )
    assert piped.returncode == 0 and json.loads(piped.stdout)["axiom_id"] == axiom_id
    # With --out it says what it wrote.
    code, out = _run_on_a_terminal(["prove", axiom_id, "--out", "r.json"], env, tmp_path)
    assert code == 0
    assert (tmp_path / "r.json").read_bytes() == piped.stdout
    assert "r.json" in out and axiom_id in out
