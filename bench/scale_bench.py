"""Publish, find and audit at scale (issue 19), as ratios and bounds measured in the same run.

    .venv/bin/python bench/scale_bench.py [--small 1000] [--mid 100000] [--big 1000000]
        [--workdir DIR] [--keep]

Builds (or, with --workdir, reuses: building 1M leaves takes minutes) sealed ledgers of --small,
--mid and --big leaves, sealed every 100,000 leaves as a crawl seals (the bench ledger of
bench/ledger_bench.py), then prints:

1. `crovia publish` from nothing (tiles, bundles, seals, a receipt per leaf, the verifier page)
   at --mid and --big: seconds against the ceiling of 10 minutes for 1M leaves (scaled to the
   leaves), seconds per leaf at --big over --mid (flat: goal <= 1.5x), and the syncs spent
   against the files written; then publish +1,000 at --big over --mid (goal <= 1.5x);
2. `find` (the library call, no process start) at --big over --small, median of several
   queries by url, title words, vendor and time, each returning a few leaves (goal: <= 50 ms);
3. `crovia audit` peak RSS at --mid and --big (goal <= 100 MB at 1M) and its growth per leaf
   between them (goal <= 8 bytes a leaf).

The machine may be shared: the load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import rss  # noqa: E402
from ledger_bench import envelopes, load_average  # noqa: E402

from ledger.keys import generate_signing_key, load_signing_key  # noqa: E402
from ledger.store import Ledger, find_leaves  # noqa: E402

CROVIA = [sys.executable, "-m", "crovia_spider"]
SEAL_EVERY = 100_000
PUBLISH_CEILING_1M = 600.0  # seconds, the issue's bound for 1M leaves


def built(workdir: Path, leaves: int) -> Path:
    """A sealed ledger of `leaves` bench leaves in workdir/L<leaves>, reused when complete."""
    directory = workdir / f"L{leaves}"
    done = workdir / f"L{leaves}.done"
    if done.exists():
        return directory
    shutil.rmtree(directory, ignore_errors=True)
    (workdir / f"L{leaves}.key").unlink(missing_ok=True)  # the bench's own throwaway key
    key = generate_signing_key(workdir / f"L{leaves}.key")
    started = time.perf_counter()
    with Ledger.open(directory, signing_key=key) as ledger:
        for offset in range(0, leaves, 1000):
            ledger.issue(envelopes(offset, min(1000, leaves - offset)))
            if (offset + 1000) % SEAL_EVERY == 0:
                ledger.seal(run_id="bench")
        ledger.seal(run_id="bench")
    print(f"   (built {leaves} leaves in {time.perf_counter() - started:.0f} s)", flush=True)
    done.touch()
    return directory


def run(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(CROVIA + args, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - started


def peak_rss(args: list[str]) -> int:
    """Bytes of peak resident memory of `crovia ARGS` (bench/rss.py: GNU time, not wait4)."""
    megabytes, _seconds, _output = rss.peak_rss(CROVIA + args, ROOT)
    return int(megabytes * 1024 * 1024)


def publish_from_nothing(workdir: Path, ledger: Path, leaves: int) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system, of the process) of a first `crovia publish`."""
    out = workdir / f"pub{leaves}"
    shutil.rmtree(out, ignore_errors=True)
    args = [*CROVIA, "publish", str(out), "--ledger-dir", str(ledger), "--json"]
    started = time.perf_counter()
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE)
    assert process.stdout is not None
    printed = process.stdout.read()
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"crovia publish exited {process.returncode}")
    report = json.loads(printed)
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, f"{report['written']} files, {report.get('syncs', '?')} syncs"


def publish_more(workdir: Path, ledger: Path, leaves: int, key_file: Path) -> float:
    """Seconds of `crovia publish` after 1,000 more leaves and a seal (the directory published)."""
    with Ledger.open(ledger, signing_key=load_signing_key(key_file)) as writer:
        start = 10**8 + writer.leaf_count
        writer.issue(envelopes(start, 1000))
        writer.seal(run_id="bench")
    return run(["publish", str(workdir / f"pub{leaves}"), "--ledger-dir", str(ledger)])


def find_queries(leaves: int) -> list[dict]:
    """Queries each matching one or a few leaves of a bench ledger of `leaves` leaves."""
    middle = envelopes(leaves // 2, 1)[0]["body"]["spider_record"]
    return [
        {"url": middle["url"]},
        {"title": f"Spotlight {leaves // 2}"},
        {"title": f"{leaves // 3} spot gpus"},
        {"vendor": "arxiv_cs_ai", "title": f"{leaves - 1}"},
        {"since": "2026-06-18T04:43:37.219665Z", "url": middle["url"]},
    ]


def time_find(ledger: Path, leaves: int, rounds: int = 5) -> float:
    """Median seconds of one query (several queries, several rounds)."""
    times = []
    for _ in range(rounds):
        for query in find_queries(leaves):
            started = time.perf_counter()
            found = list(find_leaves(ledger, **query))
            times.append(time.perf_counter() - started)
            assert found, query
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--mid", type=int, default=100_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, help="where the ledgers are built, or reused")
    parser.add_argument("--keep", action="store_true", help="keep a temporary workdir")
    args = parser.parse_args()
    print(f"load average at start: {load_average()} on {os.cpu_count()} CPUs", flush=True)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        report(args.workdir, args)
    else:
        scratch = tempfile.mkdtemp(prefix="scale_bench-")
        try:
            report(Path(scratch), args)
        finally:
            if not args.keep:
                shutil.rmtree(scratch)
    print(f"load average at end: {load_average()}", flush=True)


def report(workdir: Path, args: argparse.Namespace) -> None:
    small, mid, big = (built(workdir, n) for n in (args.small, args.mid, args.big))
    ceiling = PUBLISH_CEILING_1M * args.big / 1_000_000
    mid_s, mid_cpu, mid_files = publish_from_nothing(workdir, mid, args.mid)
    big_s, big_cpu, big_files = publish_from_nothing(workdir, big, args.big)
    print(
        f"1. publish from nothing, {args.mid} leaves: {mid_s:.1f} s, {mid_cpu:.1f} s of CPU"
        f" ({mid_files})",
        flush=True,
    )
    print(
        f"   publish from nothing, {args.big} leaves: {big_s:.1f} s, {big_cpu:.1f} s of CPU"
        f" ({big_files}); bound {ceiling:.0f} s -> {big_s / ceiling:.2f} of it wall,"
        f" {big_cpu / ceiling:.2f} CPU (goal <= 1.0)"
    )
    flat = (big_cpu / args.big) / (mid_cpu / args.mid)
    print(f"   CPU per leaf, {args.big} vs {args.mid}: {flat:.2f}x (goal <= 1.5x)", flush=True)
    more = [
        (
            publish_more(workdir, big, args.big, workdir / f"L{args.big}.key"),
            publish_more(workdir, mid, args.mid, workdir / f"L{args.mid}.key"),
        )
        for _ in range(3)
    ]
    big_more, mid_more = min(m[0] for m in more), min(m[1] for m in more)
    print(
        f"   publish +1,000, {args.big} vs {args.mid} leaves: {big_more:.2f} s vs"
        f" {mid_more:.2f} s (best of 3) -> {big_more / mid_more:.2f}x (goal <= 1.5x)",
        flush=True,
    )
    list(find_leaves(big, url="warm"))
    list(find_leaves(small, url="warm"))
    find_big, find_small = time_find(big, args.big), time_find(small, args.small)
    print(
        f"2. find, {args.big} vs {args.small} leaves: {find_big * 1e3:.1f} ms vs"
        f" {find_small * 1e3:.1f} ms (median) -> {find_big / find_small:.2f}x;"
        f" bound 50 ms -> {find_big / 0.050:.2f} of it (goal <= 1.0)",
        flush=True,
    )
    rss_mid = peak_rss(["audit", "--ledger-dir", str(mid)])
    rss_big = peak_rss(["audit", "--ledger-dir", str(big)])
    per_leaf = (rss_big - rss_mid) / (args.big - args.mid)
    print(
        f"3. audit peak RSS: {rss_mid / 2**20:.1f} MB at {args.mid} leaves,"
        f" {rss_big / 2**20:.1f} MB at {args.big} (goal <= 100 MB at 1M);"
        f" growth {per_leaf:.2f} bytes a leaf (goal <= 8)",
        flush=True,
    )


if __name__ == "__main__":
    main()
