"""`crovia audit` on a ledger made by real crawls vs one core verifying the same signatures
(issue 19, observation 11), as a ratio measured in the same run (no threshold asserted).

    .venv/bin/python bench/audit_crawl_bench.py [--feeds 100] [--items 100000] [--rounds 3]
        [--workdir bench/results] [--profile]

The ledger is built once by two real `scrapy crawl vendor_press` runs against a feed server on
127.0.0.1 (bench/crawl_bench.py's feeds: half the feeds each), default seals (every 1,000
leaves), fetch records and kept bodies on, with a `crovia rotate-key` between the two crawls, so
the audit follows a rotation. It is cached in `<workdir>/audit_crawl_<items>/` (bench/results/
is git-ignored) and reused. Then, in interleaved rounds: `crovia audit` (process start included,
wall time) against one core verifying every envelope's signature with PyNaCl under the key of its
era (messages prepared untimed). The best and the median ratios are printed with the load
average (goal <= 1.0x). The CPU time of the audit's processes against the floor's is printed too
(at most 2.0x means at most 1.0x in wall time on two idle cores). `--profile` also prints the CPU a
leaf of one audit run in this process, split between the parent's pass and the worker processes.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nacl.signing
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from crawl_bench import FAST, write_feeds  # noqa: E402
from ledger_bench import load_average, ratio_line  # noqa: E402

from crovia_spider.demo import serve  # noqa: E402
from ledger.jsonl import iter_lines  # noqa: E402
from ledger.keys import generate_signing_key  # noqa: E402

BIN = Path(sys.executable).parent
CROVIA = [sys.executable, "-m", "crovia_spider"]


def build(directory: Path, feeds: int, items: int) -> None:
    """Two real crawls into `directory/ledger` with a key rotation between them."""
    www = directory / "www"
    www.mkdir(parents=True)
    names = write_feeds(www, items, feeds)
    old, new = directory / "old.key", directory / "new.key"
    generate_signing_key(old)
    generate_signing_key(new)
    server = serve(www)
    try:
        port = server.server_address[1]
        urls = [f"http://127.0.0.1:{port}/{name}" for name in names]
        half = len(urls) // 2
        crawl(directory, urls[:half], old, "first")
        subprocess.run(
            [*CROVIA, "rotate-key", "--ledger-dir", str(directory / "ledger"), "--key", str(old),
             "--new-key", str(new)],
            check=True, capture_output=True, cwd=ROOT,
        )  # fmt: skip
        crawl(directory, urls[half:], new, "second")
    finally:
        server.shutdown()
    (directory / "complete").write_text("built\n")


def crawl(directory: Path, urls: list[str], key: Path, name: str) -> None:
    feeds = directory / f"{name}.toml"
    rows = (f'[[feeds]]\nvendor = "bench_{name}_{i}"\nurl = "{u}"\n' for i, u in enumerate(urls))
    feeds.write_text("".join(rows))
    env = dict(
        os.environ,
        CROVIA_FEEDS_FILE=str(feeds),
        CROVIA_LEDGER_DIR=str(directory / "ledger"),
        CROVIA_SIGNING_KEY_FILE=str(key),
    )
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", "-s", "CROVIA_POLITE_DELAYS=0", *FAST]
    with tempfile.TemporaryFile() as log:
        if subprocess.run(args, cwd=ROOT, env=env, stdout=log, stderr=log).returncode != 0:
            log.seek(0)
            sys.exit(f"bench: the {name} crawl failed:\n{log.read()[-3000:].decode()}")


def eras(directory: Path) -> list[tuple[int, nacl.signing.VerifyKey]]:
    """(first leaf, verify key) of each key era, from the key files and rotations.jsonl."""
    keys = [
        nacl.signing.SigningKey(bytes.fromhex((directory / f"{n}.key").read_text().strip()))
        for n in ("old", "new")
    ]
    rotation = orjson.loads((directory / "ledger" / "rotations.jsonl").read_bytes().splitlines()[0])
    return [(0, keys[0].verify_key), (rotation["leaf_count"], keys[1].verify_key)]


def one_core_verify(directory: Path) -> tuple[float, float]:
    """Seconds (wall, CPU) one core spends verifying every envelope signature under its era's
    key, messages prepared untimed."""
    (_, first), (switch, second) = eras(directory)
    spent, chunk = [0.0, 0.0], []
    for leaf, (_offset, line) in enumerate(iter_lines(directory / "ledger" / "axiom_ledger.jsonl")):
        if leaf == switch:
            _verify_timed(first, chunk, spent)
            chunk = []
        envelope = orjson.loads(line)
        signature = bytes.fromhex(envelope.pop("signature")[8:])
        envelope.pop("axiom_id")
        chunk.append((orjson.dumps(envelope, option=orjson.OPT_SORT_KEYS), signature))
        if len(chunk) == 2000 and leaf + 1 != switch:
            _verify_timed(first if leaf < switch else second, chunk, spent)
            chunk = []
    _verify_timed(second, chunk, spent)
    return spent[0], spent[1]


def _verify_timed(
    key: nacl.signing.VerifyKey, chunk: list[tuple[bytes, bytes]], spent: list[float]
) -> None:
    started, cpu = time.perf_counter(), time.process_time()
    for message, signature in chunk:
        key.verify(message, signature)
    spent[0] += time.perf_counter() - started
    spent[1] += time.process_time() - cpu


def timed_audit(directory: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [*CROVIA, "audit", "--ledger-dir", str(directory / "ledger")],
        capture_output=True, cwd=ROOT,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"bench: crovia audit failed:\n{proc.stdout.decode()}{proc.stderr.decode()}")
    return elapsed


def cpu_split(directory: Path) -> tuple[float, float, float]:
    """(wall, parent CPU, worker CPU) seconds of one audit run in this process on worker
    processes, as `crovia audit` runs it (where the CPU goes: the per-line checks or the pass)."""
    from ledger.audit import audit

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, cpu = time.perf_counter(), time.process_time()
    audit(directory / "ledger", workers=2, processes=True)
    wall, parent = time.perf_counter() - started, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, parent, workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=100)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {load_average()} on {os.cpu_count()} CPUs", flush=True)
    directory = args.workdir / f"audit_crawl_{args.feeds}x{args.items // args.feeds}"
    if not (directory / "complete").exists():
        if directory.exists():
            sys.exit(f"bench: {directory} is half built; remove it")
        started = time.perf_counter()
        build(directory, args.feeds, args.items)
        print(f"   (built by two crawls in {time.perf_counter() - started:.0f}s)", flush=True)
    ledger = directory / "ledger"
    leaves = sum(1 for _ in iter_lines(ledger / "axiom_ledger.jsonl"))
    size = (ledger / "axiom_ledger.jsonl").stat().st_size
    seals = sum(1 for _ in iter_lines(ledger / "seals.jsonl"))
    print(f"   ledger: {leaves} leaves, {size / leaves:.0f} bytes a line, {seals} seals")
    audits, floors, cpus, floor_cpus = [], [], [], []
    for _ in range(args.rounds):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        audits.append(timed_audit(directory))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        wall, cpu = one_core_verify(directory)
        floors.append(wall)
        floor_cpus.append(cpu)
    label = f"crovia audit of {leaves} real-crawl leaves vs one core verifying their signatures"
    print(ratio_line(label, audits, floors, "s", "<= 1.0x"))
    print(ratio_line("   CPU of all the audit's processes vs that core's", cpus, floor_cpus, "s",
                     "<= 2.0x on two cores"))  # fmt: skip
    if args.profile:
        wall, parent, workers = cpu_split(directory)
        print(
            f"   one audit in-process: wall {wall:.2f}s, CPU {parent * 1e6 / leaves:.1f} us a"
            f" leaf in the parent, {workers * 1e6 / leaves:.1f} us a leaf in the workers"
        )
    print(f"load average at end: {load_average()}", flush=True)


if __name__ == "__main__":
    main()
