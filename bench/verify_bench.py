"""`crovia verify` start-up: a receipt without stamps must not pay for the stamp libraries.

    .venv/bin/python bench/verify_bench.py [--rounds 15]

Times `crovia verify RECEIPT --pubkey KEY` on the reference receipt (its copy in
tests/vectors/, no stamps) against the floor `python -c "import nacl, orjson"` (the two
libraries a receipt check needs), alternating them so load from other processes hits both alike;
prints the ratio of the best rounds and of the medians (goal: <= 2x, and 0.15 s on an idle
machine, issue 19). The project's modules are byte-compiled first (`compileall`), as an installed
package is: this environment sets PYTHONDONTWRITEBYTECODE, and compiling ~40 modules from source
on every start would be measured instead of the imports.
"""

from __future__ import annotations

import argparse
import compileall
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from ledger_bench import load_average, ratio_line  # noqa: E402

SEED = ROOT / "tests" / "vectors" / "seed_axiom_proof.json"  # the reference, copied
CROVIA = Path(sys.executable).parent / "crovia"


def timed(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--receipt", type=Path, default=SEED)
    args = parser.parse_args()
    key = json.loads(args.receipt.read_bytes())["seal"]["public_key_hex"]
    verify = [str(CROVIA), "verify", str(args.receipt), "--pubkey", key]
    floor = [sys.executable, "-c", "import nacl.signing, orjson"]
    for package in ("ledger", "crovia_spider"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    print(f"load average at start: {load_average()}", flush=True)
    ours, base = [], []
    for _ in range(args.rounds):
        ours.append(timed(verify))
        base.append(timed(floor))
    label = "crovia verify of a receipt without stamps vs import nacl, orjson"
    print(ratio_line(label, ours, base, "ms", "<= 2x; 150 ms idle"))
    print(f"load average at end: {load_average()}", flush=True)


if __name__ == "__main__":
    main()
