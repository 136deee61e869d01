"""The ledger subcommands end to end, in process: exit codes, messages, --json."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.canonical import canonical_json
from ledger.keys import generate_signing_key
from ledger.store import Ledger
from tests.vectors.make_vectors import SEED_RECEIPT, sample_envelope

SEED_KEY = "cf742e26f75669dc673cb5c0786a1ae23ae8ca19c347317192ce40c28a7ff25c"


@pytest.fixture
def keyed(tmp_path: Path) -> tuple[Path, Path]:
    """A key file and a ledger of 5 leaves, 3 of them sealed."""
    key_file, ledger_dir = tmp_path / "signing.key", tmp_path / "ledger"
    key = generate_signing_key(key_file)
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(3)])
        ledger.seal()
        ledger.issue([sample_envelope(n) for n in range(3, 5)])
    return key_file, ledger_dir


def _axiom_id(ledger_dir: Path, leaf: int) -> str:
    line = (ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()[leaf]
    return json.loads(line)["axiom_id"]


def test_verify_the_seed_unpinned_says_so(capsys: pytest.CaptureFixture) -> None:
    assert main(["verify", str(SEED_RECEIPT)]) == 1  # issue 16: no pin is not an OK
    assert "no key was pinned" in capsys.readouterr().err
    assert main(["verify", str(SEED_RECEIPT), "--any-key"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK (--any-key): axm_b46c79d2") and "no key was pinned" in out


def test_verify_pinned_and_json(capsys: pytest.CaptureFixture) -> None:
    assert main(["verify", str(SEED_RECEIPT), "--pubkey", SEED_KEY, "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["ok"] and verdict["key_pinned"] and verdict["leaf_index"] == 233395


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        (["--pubkey", "zz"], "--pubkey must be 64 hex"),
        (["--pubkey", SEED_KEY[:-2]], "--pubkey must be 64 hex"),
        (["--key-id", "4308"], "--key-id must be 16 hex"),
        (["--key-id", "43085cfdd0a2e62g"], "--key-id must be 16 hex"),
    ],
)
def test_a_malformed_pin_is_a_usage_error_before_any_check(
    tmp_path: Path, pin: list[str], message: str, capsys: pytest.CaptureFixture
) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")  # would fail receipt_shape (exit 1) if checks ran first
    for receipt in (str(SEED_RECEIPT), str(junk)):
        assert main(["verify", receipt, *pin]) == 2
        err = capsys.readouterr().err
        assert message in err and "pinned_key" not in err
    assert main(["verify", str(SEED_RECEIPT), *pin, "--json"]) == 2


def test_a_pin_in_capitals_is_the_same_pin(capsys: pytest.CaptureFixture) -> None:
    seed_key_id = json.loads(SEED_RECEIPT.read_bytes())["seal"]["key_id"]
    assert main(["verify", str(SEED_RECEIPT), "--pubkey", SEED_KEY.upper()]) == 0
    assert main(["verify", str(SEED_RECEIPT), "--key-id", seed_key_id.upper()]) == 0
    assert "no key was pinned" not in capsys.readouterr().out


def test_a_failed_check_exits_1_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    receipt = json.loads(SEED_RECEIPT.read_bytes())
    receipt["seal"]["merkle_root"] = "00" * 32
    path = tmp_path / "bad.json"
    path.write_bytes(canonical_json(receipt))  # exact bytes, so the check that fails is the root
    assert main(["verify", str(path)]) == 1
    err = capsys.readouterr().err
    assert "check merkle_root failed" in err and "00" * 32 in err and "expected" in err
    assert main(["verify", str(path), "--json"]) == 1
    failure = json.loads(capsys.readouterr().out)
    assert failure["check"] == "merkle_root" and failure["expected"] == "00" * 32
    assert failure["computed"] == receipt_root()


def receipt_root() -> str:
    return json.loads(SEED_RECEIPT.read_bytes())["seal"]["merkle_root"]


def test_verify_of_a_non_json_file_fails_its_shape(tmp_path: Path) -> None:
    path = tmp_path / "junk.json"
    path.write_text("{not json")
    assert main(["verify", str(path)]) == 1
    assert main(["verify", str(tmp_path / "missing.json")]) == 2


def test_prove_prints_a_receipt_that_verifies(keyed, tmp_path, capsys) -> None:
    _key_file, ledger_dir = keyed
    assert main(["prove", _axiom_id(ledger_dir, 1), "--ledger-dir", str(ledger_dir)]) == 0
    receipt = capsys.readouterr().out
    assert receipt.endswith("}")  # exactly the canonical bytes when not at a terminal
    path = tmp_path / "receipt.json"
    path.write_text(receipt)
    assert main(["verify", str(path), "--any-key"]) == 0


def test_prove_explains_unsealed_and_unknown(keyed, capsys: pytest.CaptureFixture) -> None:
    _key_file, ledger_dir = keyed
    assert main(["prove", _axiom_id(ledger_dir, 4), "--ledger-dir", str(ledger_dir)]) == 2
    assert "crovia seal" in capsys.readouterr().err
    assert main(["prove", "axm_" + "0" * 64, "--ledger-dir", str(ledger_dir)]) == 2
    assert "not in the ledger" in capsys.readouterr().err


def test_seal_then_seal_again(keyed, capsys: pytest.CaptureFixture) -> None:
    key_file, ledger_dir = keyed
    args = ["seal", "--ledger-dir", str(ledger_dir), "--key", str(key_file)]
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("sealed 5 leaves")
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["new_seal"] is False
    key_file.chmod(0o644)
    assert main(args) == 2
    assert f"chmod 600 {key_file}" in capsys.readouterr().err


def test_stats_and_reindex(keyed, capsys: pytest.CaptureFixture) -> None:
    _key_file, ledger_dir = keyed
    assert main(["stats", "--ledger-dir", str(ledger_dir), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["leaves"], stats["seals"], stats["unsealed_leaves"]) == (5, 1, 2)
    assert main(["stats", "--ledger-dir", str(ledger_dir)]) == 0
    assert "5 leaves, 1 seals" in capsys.readouterr().out
    (ledger_dir / "index.sqlite").unlink()
    assert main(["stats", "--ledger-dir", str(ledger_dir)]) == 2
    assert "crovia reindex" in capsys.readouterr().err
    assert main(["reindex", "--ledger-dir", str(ledger_dir)]) == 0
    assert main(["stats", "--ledger-dir", str(ledger_dir)]) == 0


def test_ledger_dir_defaults_from_the_environment(keyed, monkeypatch, capsys) -> None:
    _key_file, ledger_dir = keyed
    monkeypatch.setenv("CROVIA_LEDGER_DIR", str(ledger_dir))
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["leaves"] == 5


def test_the_cli_module_imports_no_crypto_until_a_command_runs() -> None:
    code = (
        "import sys, crovia_spider.cli.ledger_proof_cmds, crovia_spider.cli.ledger_admin_cmds;"
        " print(sorted({'nacl', 'orjson', 'ledger.store'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_seal_and_reindex_refuse_a_missing_ledger(tmp_path: Path, capsys) -> None:
    key_file = tmp_path / "signing.key"
    generate_signing_key(key_file)
    missing = tmp_path / "typo"
    assert main(["seal", "--ledger-dir", str(missing), "--key", str(key_file)]) == 2
    assert main(["reindex", "--ledger-dir", str(missing)]) == 2
    assert "no ledger at" in capsys.readouterr().err
    assert not missing.exists()


def test_audit_refuses_a_malformed_pubkey(keyed, capsys: pytest.CaptureFixture) -> None:
    _key_file, ledger_dir = keyed
    assert main(["audit", "--ledger-dir", str(ledger_dir), "--pubkey", "xyz"]) == 2
    assert "64 hex" in capsys.readouterr().err


def test_commands_names_each_command_with_the_module_that_registers_it() -> None:
    """`crovia X` imports only COMMANDS[X] (a fast `crovia verify`): the map must be whole."""
    from crovia_spider.cli import COMMANDS, SUBCOMMAND_MODULES, _Parser, build_parser

    for module in SUBCOMMAND_MODULES:
        subparsers = _Parser(prog="crovia").add_subparsers()
        importlib.import_module(module).register(subparsers)
        assert sorted(subparsers.choices) == sorted(c for c, m in COMMANDS.items() if m == module)
    full = build_parser()._subparsers._group_actions[0].choices  # `crovia --help`'s order
    assert list(full) == list(COMMANDS)


@pytest.mark.parametrize(
    ("argv", "registered"),
    [
        (["verify", "r.json"], ["verify", "prove"]),
        (["-v", "audit"], ["seal", "audit", "stats", "reindex"]),
        (["--help"], None),
        (["-h", "verify"], None),
        (["verfy"], None),
        ([], None),
    ],
)
def test_only_the_named_commands_module_is_registered(argv, registered) -> None:
    from crovia_spider.cli import COMMANDS, build_parser

    choices = list(build_parser(argv)._subparsers._group_actions[0].choices)
    assert choices == (list(COMMANDS) if registered is None else registered)


def test_a_misspelt_command_still_gets_did_you_mean(capsys) -> None:
    assert main(["verfy", "r.json"]) == 2
    assert "did you mean 'verify'?" in capsys.readouterr().err
