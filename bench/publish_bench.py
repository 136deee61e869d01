"""Publishing receipts, as a ratio measured in the same run (no thresholds asserted).

    .venv/bin/python bench/publish_bench.py [--large 1000000] [--small 1000] [--new 1000]

Publishing --new newly sealed leaves (their receipts, bound to the seal that first covers them,
plus the page and trust root) onto a ledger of --large leaves vs the same onto one of --small
leaves (goal <= 1.5x: the cost follows what is new, not the ledger's size). The base ledgers are
built once and kept in bench/results/ (a 1,000,000-leaf ledger takes a few minutes to sign and
about 1.5 GB); each round adds --new leaves and a seal to both, untimed, then times publishing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ledger_bench import envelopes  # noqa: E402

from crovia_spider.web.site import publish_site  # noqa: E402
from ledger.keys import generate_signing_key, load_signing_key  # noqa: E402
from ledger.store import Ledger  # noqa: E402

ROUNDS = 5
BUILD_BATCH = 10_000


def base_ledger(workdir: Path, leaves: int) -> tuple[Path, Path]:
    """A sealed, published ledger of at least `leaves` leaves, built once and reused."""
    directory = workdir / f"publish_base_{leaves}"
    key_file = workdir / "publish_bench.key"
    key = load_signing_key(key_file) if key_file.exists() else generate_signing_key(key_file)
    with Ledger.open(directory / "ledger", signing_key=key) as ledger:
        while ledger.leaf_count < leaves:
            start = ledger.leaf_count
            ledger.issue(envelopes(start, min(BUILD_BATCH, leaves - start)))
            print(f"  built {ledger.leaf_count:,} / {leaves:,} leaves", flush=True)
        ledger.seal()
        publish_site(ledger, directory / "public")
    return directory, key_file


def one_round(directory: Path, key_file: Path, new: int) -> float:
    """Add `new` leaves and a seal (untimed), then time publishing them."""
    key = load_signing_key(key_file)
    with Ledger.open(directory / "ledger", signing_key=key) as ledger:
        ledger.issue(envelopes(10**9 + ledger.leaf_count, new))
        ledger.seal()
        started = time.perf_counter()
        counts = publish_site(ledger, directory / "public")
        elapsed = time.perf_counter() - started
    assert counts["receipts"] == new, counts
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--new", type=int, default=1_000)
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    small = base_ledger(args.workdir, args.small)
    large = base_ledger(args.workdir, args.large)
    times: dict[str, list[float]] = {"small": [], "large": []}
    for _ in range(ROUNDS):
        times["small"].append(one_round(*small, args.new))
        times["large"].append(one_round(*large, args.new))
    best = min(times["large"]) / min(times["small"])
    median = statistics.median(times["large"]) / statistics.median(times["small"])
    print(
        f"publish {args.new:,} new receipts onto {args.large:,} vs {args.small:,} leaves:"
        f" best {best:.2f}x, median {median:.2f}x (goal <= 1.5x);"
        f" small median {statistics.median(times['small']) * 1000:.0f} ms"
    )
    print(f"load average at end: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
