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
print(code, ",".join(loaded))
"""


def verify_and_list_imports(*args: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (STAMP_LIBRARIES,), "verify", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    code, _, loaded = done.stdout.strip().partition(" ")
    return int(code), [name for name in loaded.split(",") if name]


def test_a_receipt_without_stamps_loads_no_stamp_library() -> None:
    key = json.loads(SEED.read_bytes())["seal"]["public_key_hex"]
    assert verify_and_list_imports(str(SEED), "--pubkey", key) == (0, [])


def test_a_receipt_with_a_token_still_loads_and_checks_it(tmp_path: Path) -> None:
    receipt = json.loads(SEED.read_bytes())
    receipt["rfc3161_timestamps"] = [
        {"gen_time": "2026-01-01T00:00:00Z", "token_base64": "AAAA", "tsa_url": "http://t/"}
    ]
    path = tmp_path / "r.json"
    path.write_bytes(json.dumps(receipt, sort_keys=True, separators=(",", ":")).encode())
    code, loaded = verify_and_list_imports(str(path), "--pubkey", receipt["seal"]["public_key_hex"])
    assert code == 1 and "pyasn1" in loaded
