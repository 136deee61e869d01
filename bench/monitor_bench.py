"""The monitor's memory: a first run over a whole log must not hold the increment (issue 19).

    .venv/bin/python bench/monitor_bench.py [--leaves 1000000] [--small 1000]

Prints the peak RSS (GNU time's %M) of `crovia monitor DIR --vkey ...` with no state (a
first run, every entry checked) over a --leaves log and over a --small one, and of a process that
only imports what the monitor imports (the floor), with the growth per entry between the two logs.
Goal: at most 100 MB at 1,000,000 entries. The logs are built once (every leaf really signed,
sealed every 100,000 leaves, published as tlog tiles, bundles and seals, without receipts) and kept
in bench/results/monitor_base_<N>/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ledger.publish import publish  # noqa: E402
from ledger.store import Ledger  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import rss  # noqa: E402
from ledger_bench import load_average  # noqa: E402
from tlog_bench import Base as TlogBase  # noqa: E402

CROVIA = [sys.executable, "-m", "crovia_spider"]
RESULTS = ROOT / "bench" / "results"
SEAL_EVERY = 100_000
FLOOR = "import ledger.monitor, crovia_spider.cli.monitor_cmds, crovia_spider.cli"


class Base(TlogBase):
    """A published log of `leaves` entries under bench/results/, sealed every SEAL_EVERY leaves
    as a crawl seals (tlog_bench's base, with more seals and no monitor state)."""

    def __init__(self, leaves: int, results: Path = RESULTS) -> None:
        super().__init__(leaves, results, name="monitor_base")

    def sealed_while_growing(self, ledger: Ledger) -> None:
        if ledger.leaf_count % SEAL_EVERY == 0:
            ledger.seal(run_id="bench_base")

    def published(self) -> None:
        publish(self.ledger, self.pub)


def peak_rss(args: list[str]) -> tuple[float, float, str]:
    """Peak RSS (MB) and wall seconds of `args`, and its output (bench/rss.py says why GNU time)."""
    return rss.peak_rss(args, ROOT)


def first_run(base: Base) -> tuple[float, float]:
    rss, seconds, output = peak_rss([*CROVIA, "monitor", str(base.pub), "--vkey", base.vkey])
    if f"size {base.leaves}: +{base.leaves} entries verified" not in output:
        raise SystemExit(f"unexpected monitor output: {output}")
    return rss, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the logs are kept")
    args = parser.parse_args()
    print(f"load average at start: {load_average()}", flush=True)
    big, small = Base(args.leaves, args.results), Base(args.small, args.results)
    small.ensure()
    big.ensure()
    floor, _, _ = peak_rss([sys.executable, "-c", FLOOR])
    small_rss, _ = first_run(small)
    big_rss, seconds = first_run(big)
    growth = (big_rss - small_rss) * (1 << 20) / (args.leaves - args.small)
    print(
        f"monitor first run over {args.leaves} entries: peak RSS {big_rss:.0f} MB"
        f" (goal <= 100 MB; {'met' if big_rss <= 100 else 'NOT met'}), {seconds:.0f} s;"
        f" over {args.small}: {small_rss:.0f} MB; imports alone: {floor:.0f} MB;"
        f" growth {growth:.1f} bytes per entry"
    )
    print(f"load average at end: {load_average()}", flush=True)


if __name__ == "__main__":
    main()
