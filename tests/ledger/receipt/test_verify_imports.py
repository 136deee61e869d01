"""`crovia verify` imports only what the receipt needs (issue 19, obs 5): a receipt without stamps
loads none of the RFC 3161, CMS, OpenTimestamps or Bitcoin libraries; one with a token loads them.
(Its start-up time is measured as a ratio in bench/verify_bench.py, never asserted here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.crawl import PROJECT_ROOT

SEED = PROJECT_ROOT / "tests" / "vectors" / "seed_axiom_proof.json"  # the reference, copied
STAMP_LIBRARIES = (
    "cryptography",
    "rfc3161_client",
    "pyasn1",
    "pyasn1_modules",
    "opentimestamps",
    "bitcoin",
    "scrapy",
    "twisted",
)
PROBE = """
import contextlib, io, sys
from crovia_spider.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(%r))
commands = sorted(m for m in sys.modules if m.startswith("crovia_spider.cli.") and "_cmds" in m)
print(code, ",".join(loaded), ",".join(commands))
"""


def verify_and_list_imports(
    *args: str, watched: tuple[str, ...] = STAMP_LIBRARIES
) -> tuple[int, list[str], list[str]]:
    """`crovia verify ARGS` in a new interpreter: (exit code, the `watched` top-level modules it
    loaded, the command modules it loaded)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (watched,), "verify", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    code, loaded, commands = done.stdout.rstrip("\n").split(" ")
    return int(code), [n for n in loaded.split(",") if n], [n for n in commands.split(",") if n]


def test_a_receipt_without_stamps_loads_no_stamp_library() -> None:
    key = json.loads(SEED.read_bytes())["seal"]["public_key_hex"]
    assert verify_and_list_imports(str(SEED), "--pubkey", key)[:2] == (0, [])


def test_a_receipt_with_a_token_still_loads_and_checks_it(tmp_path: Path) -> None:
    receipt = json.loads(SEED.read_bytes())
    receipt["rfc3161_timestamps"] = [
        {"gen_time": "2026-01-01T00:00:00Z", "token_base64": "AAAA", "tsa_url": "http://t/"}
    ]
    path = tmp_path / "r.json"
    path.write_bytes(json.dumps(receipt, sort_keys=True, separators=(",", ":")).encode())
    code, loaded, _ = verify_and_list_imports(
        str(path), "--pubkey", receipt["seal"]["public_key_hex"]
    )
    assert code == 1 and "pyasn1" in loaded


# What a receipt check does not need: the other commands, logging (set up only for commands
# that log), the batch signer's thread pool, temporary files, "did you mean".
NOT_NEEDED = ("logging", "concurrent", "tempfile", "difflib", "subprocess", "sqlite3")


def test_verify_imports_its_own_command_module_and_no_logging_or_thread_pool() -> None:
    key = json.loads(SEED.read_bytes())["seal"]["public_key_hex"]
    assert verify_and_list_imports(str(SEED), "--pubkey", key, watched=NOT_NEEDED) == (
        0,
        [],
        ["crovia_spider.cli.ledger_proof_cmds"],
    )


def test_reading_or_auditing_a_ledger_imports_no_stamp_library() -> None:
    """The OpenTimestamps stack (about a fifth of a second) is imported only to make a receipt
    of a stamped seal, not by every command that opens a ledger (`audit`, `stats`, `find`)."""
    code = (
        "import sys, ledger.audit, ledger.store;"
        f" print(sorted({{m.split('.')[0] for m in sys.modules}} & set({STAMP_LIBRARIES!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stderr
