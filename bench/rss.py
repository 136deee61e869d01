"""Peak resident memory of a command, for the benches.

GNU time's %M, not wait4's ru_maxrss of a child this process starts: a child forked (or vforked)
from a bench that already holds a large ledger in memory counts the pages it shared with it until
exec, so every command measured after the bench grew would show the bench's own size (the audit
measured 133.6 MB at 100k and at 1M leaves that way, 35 MB with GNU time).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

TIME = shutil.which("time", path="/usr/bin:/bin") or "/usr/bin/time"


def peak_rss(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """Peak RSS (MB) and wall seconds of `args`, and its output (stdout and stderr)."""
    started = time.perf_counter()
    with tempfile.NamedTemporaryFile("r") as report:
        done = subprocess.run(
            [TIME, "-f", "%M", "-o", report.name, *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(args[:4])} failed:\n{done.stdout[-2000:]}")
        kib = int(report.read().split()[-1])
    return kib / 1024, time.perf_counter() - started, done.stdout
