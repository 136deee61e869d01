"""Transparency-log costs that must not grow with the log, as ratios measured in the same run.

    .venv/bin/python bench/tlog_bench.py [--base 1000000] [--small 1000] [--rounds 7]

1. `crovia seal` plus `crovia publish` of 1,000 new leaves onto a --base-leaf ledger vs onto a
   --small-leaf one (process starts included; goal <= 1.5x). Publishing writes the tiles, entry
   bundles and seals, and the 1,000 new receipts and the verifier page (docs/verifier.md), so
   this is also the figure for "publishing 1,000 new receipts";
2. `crovia monitor` of that 1,000-leaf increment of the published --base log vs of the --small
   one (goal <= 1.5x).

The rounds alternate big and small so that load from other processes hits both alike; each figure
is printed as the ratio of the best rounds and of the medians. Building the base is the slow part
(every leaf really signed, published, and verified once by a monitor to give it a state), so it is
built once, by issuing in batches of 10,000 (the signer shares large batches with a second thread),
and kept in bench/results/tlog_base_<N>/ for later runs; each run grows it by rounds x 1,000
leaves, and the figures name the sizes actually measured. Leaves carry a 200-character summary
(the seed's is 1,000) to keep the base near 1 GB; both sides use the same leaves.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ledger.envelope import new_envelope  # noqa: E402
from ledger.keys import generate_signing_key, load_signing_key  # noqa: E402
from ledger.store import (  # noqa: E402
    Ledger,
    default_origin,
    note_verifier_key,
)

sys.path.insert(0, str(ROOT / "bench"))
from ledger_bench import load_average, ratio_line, record  # noqa: E402

CROVIA = [sys.executable, "-m", "crovia_spider"]
RESULTS = ROOT / "bench" / "results"
BUILD_BATCH = 10_000
INCREMENT = 1_000


def envelopes(start: int, count: int) -> list[dict]:
    items = []
    for number in range(start, start + count):
        fields = record(number)
        fields["summary_excerpt"] = fields["summary_excerpt"][:200]
        items.append(new_envelope(fields, issued_at="2026-06-18T04:43:37Z"))
    return items


class Base:
    """A ledger of a given size, published, with a monitor state: under bench/results/."""

    def __init__(self, leaves: int, results: Path = RESULTS, name: str = "tlog_base") -> None:
        self.root = results / f"{name}_{leaves}"
        self.leaves = leaves
        self.ledger, self.pub, self.key = self.root / "ledger", self.root / "pub", self.root / "key"
        self.state = self.root / "monitor_state.json"

    @property
    def vkey(self) -> str:
        public = bytes(load_signing_key(self.key).verify_key)
        return note_verifier_key(public, default_origin(public))

    def ensure(self) -> None:
        if (self.root / "built").exists():
            return
        started = time.perf_counter()
        if self.root.exists():
            subprocess.run(["rm", "-rf", str(self.root)], check=True)
        self.root.mkdir(parents=True)
        key = generate_signing_key(self.key)
        with Ledger.open(self.ledger, signing_key=key) as ledger:
            for offset in range(0, self.leaves, BUILD_BATCH):
                ledger.issue(envelopes(offset, min(BUILD_BATCH, self.leaves - offset)))
                self.sealed_while_growing(ledger)
            ledger.seal(run_id="bench_base")
        self.published()
        (self.root / "built").write_text(f"{time.perf_counter() - started:.0f} s\n")
        print(f"   (built the {self.leaves}-leaf base in {time.perf_counter() - started:.0f} s)")

    def sealed_while_growing(self, ledger: Ledger) -> None:
        """Seals cut while the base grows: none here (one seal at the end)."""

    def published(self) -> None:
        """Publish the base and record a monitor state at its size."""
        crovia("publish", str(self.pub), "--ledger-dir", str(self.ledger))
        crovia("monitor", str(self.pub), "--vkey", self.vkey, "--state", str(self.state))

    def size(self) -> int:
        return json.loads(self.state.read_text())["size"]

    def grow(self) -> None:
        """1,000 new leaves, issued (not timed)."""
        with Ledger.open(self.ledger, signing_key=load_signing_key(self.key)) as ledger:
            ledger.issue(envelopes(10**8 + ledger.leaf_count, INCREMENT))

    def seal_and_publish(self) -> float:
        started = time.perf_counter()
        crovia("seal", "--ledger-dir", str(self.ledger), "--key", str(self.key))
        crovia("publish", str(self.pub), "--ledger-dir", str(self.ledger))
        return time.perf_counter() - started

    def monitor(self) -> float:
        started = time.perf_counter()
        out = crovia("monitor", str(self.pub), "--vkey", self.vkey, "--state", str(self.state))
        if f"+{INCREMENT} entries verified" not in out:
            raise SystemExit(f"unexpected monitor output: {out}")
        return time.perf_counter() - started


def crovia(*args: str) -> str:
    done = subprocess.run(CROVIA + list(args), cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"crovia {args[0]} failed: {done.stderr.strip()}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"load average at start: {load_average()}", flush=True)
    big, small = Base(args.base), Base(args.small)
    small.ensure()
    big.ensure()
    sizes = (big.size(), small.size())
    times: dict[str, dict[Base, list[float]]] = {
        "publish": {big: [], small: []},
        "monitor": {big: [], small: []},
    }
    for _ in range(args.rounds):
        for base in (big, small):
            base.grow()
            times["publish"][base].append(base.seal_and_publish())
            times["monitor"][base].append(base.monitor())
    label = f"{sizes[0]}..{big.size()} vs {sizes[1]}..{small.size()} leaves"
    print(
        ratio_line(
            f"1. seal + publish of +1,000, {label}",
            times["publish"][big],
            times["publish"][small],
            "ms",
            "<= 1.5x",
        )
    )
    print(
        ratio_line(
            f"2. monitor of +1,000, {label}",
            times["monitor"][big],
            times["monitor"][small],
            "ms",
            "<= 1.5x",
        )
    )
    print(f"load average at end: {load_average()}", flush=True)


if __name__ == "__main__":
    main()
