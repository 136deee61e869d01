"""Every outcome of `crovia verify` and `crovia audit` has a documented exit code, and under
`--json` exactly one JSON object on stdout: malformed input of any size or depth, usage errors and
I/O errors included. Never a traceback (issue 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.receipt import MAX_RECEIPT_BYTES
from tests.vectors.make_vectors import SEED_RECEIPT

PROJECT = Path(__file__).parents[2]

MALFORMED = {
    "5,000-digit integer": b'{"leaf_index":' + b"9" * 5000 + b"}",
    "nesting deeper than 1,000": b"[" * 100_000 + b"]" * 100_000,
    "objects nested 5,000 deep": b'{"a":' * 5000 + b"1" + b"}" * 5000,
    "invalid UTF-8": b'{"title":"\xff\xfe"}',
    "an encoded surrogate": b'{"title":"\xed\xa0\x80"}',
    "a lone surrogate escape": b'{"title":"\\ud800"}',
    "empty file": b"",
    "binary": bytes(range(256)) * 4,
    "NaN": b'{"a":NaN}',
    "a float": b'{"a":0.5}',
    "an array": b"[]",
    "a string": b'"receipt"',
    "null": b"null",
    "two values": b"{}{}",
    "truncated": SEED_RECEIPT.read_bytes()[:-1],
}


def _json_out(capsys: pytest.CaptureFixture) -> dict:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one object, one line
    result = json.loads(out)
    assert isinstance(result, dict)
    return result


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_receipts_exit_1_with_json(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "receipt.json"
    path.write_bytes(MALFORMED[name])
    assert main(["verify", str(path), "--json"]) == 1
    result = _json_out(capsys)
    assert result["ok"] is False and result["exit_code"] == 1
    assert result["check"] in {"canonical_bytes", "receipt_shape"}
    assert main(["verify", str(path)]) == 1
    assert "check " in capsys.readouterr().err


def test_a_huge_file_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as out:
        out.truncate(MAX_RECEIPT_BYTES + 1)  # sparse: nothing is written, the size is real
    assert main(["verify", str(path), "--json"]) == 1
    result = _json_out(capsys)
    assert result["check"] == "canonical_bytes" and "larger than" in result["message"]


@pytest.mark.parametrize("name", ["5,000-digit integer", "nesting deeper than 1,000"])
def test_a_real_process_prints_no_traceback(name: str, tmp_path: Path) -> None:
    path = tmp_path / "receipt.json"
    path.write_bytes(MALFORMED[name])
    done = subprocess.run(
        [sys.executable, "-m", "crovia_spider", "verify", str(path), "--json"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert json.loads(done.stdout)["check"] == "canonical_bytes"


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--json"],
        ["verify", str(SEED_RECEIPT), "--json", "--bogus"],
        ["verify", str(SEED_RECEIPT), "--json", "--pubkey", "a" * 64, "--key-id", "b" * 16],
        ["verify", str(SEED_RECEIPT), "--json", "--pubkey", "zz"],
        ["audit", "--json", "--workers", "0"],
        ["audit", "--json", "--pubkey", "xyz"],
        ["--json", "nonsense"],
    ],
)
def test_usage_errors_exit_2_with_json(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    assert main(argv) == 2
    result = _json_out(capsys)
    assert result["ok"] is False and result["exit_code"] == 2 and result["error"] == "usage"
    assert result["message"]


def test_io_errors_exit_2_with_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for target in (tmp_path / "missing.json", tmp_path):
        assert main(["verify", str(target), "--json"]) == 2
        result = _json_out(capsys)
        assert result["ok"] is False and result["exit_code"] == 2
        assert str(target) in result["message"]
    assert main(["audit", "--ledger-dir", str(tmp_path / "none"), "--json"]) == 2
    result = _json_out(capsys)
    assert result["exit_code"] == 2 and "no ledger" in result["message"]


def test_a_usage_error_without_json_is_argparses(capsys: pytest.CaptureFixture) -> None:
    assert main(["verify"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "usage: crovia verify" in captured.err
    assert "give a RECEIPT or --bundle ZIP" in captured.err  # a receipt, or a bundle of them
