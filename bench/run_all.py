"""`make bench`: every benchmark of the project, one after the other, each printing its own ratios.

The benches measure ratios against a floor or a peer in the same run (never absolute times), so
their figures mean something on a shared, noisy machine. Run them on an otherwise idle machine:
both use the second core.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

BENCHES = (
    "ledger_bench.py",
    "crawl_bench.py",
    "tlog_bench.py",
    "monitor_bench.py",
    "verify_bench.py",
    "scale_bench.py",
    "capacity_bench.py",
    "audit_crawl_bench.py",
    "kinds_bench.py",
    "stage_bench.py",
    "capture_bench.py",
    "browser_bench.py",
    "cluster_bench.py",
)


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    here = Path(__file__).resolve().parent
    failed = 0
    for name in BENCHES:
        print(f"== {name}", flush=True)
        failed |= subprocess.run([sys.executable, str(here / name)], check=False).returncode
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
