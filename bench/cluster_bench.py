"""Bench: a crawl cluster (docs/cluster.md): what each added worker buys when politeness binds, and
the sequencer's own ceiling against `Ledger.issue` alone, both measured in the same run.

1. Throughput with 1, 2 and 4 workers. `--hosts` loopback hosts (127.0.0.2 and up, one feed server
   each) serve `--feeds-per-host` RSS feeds of `--items-per-feed` items; every feed's table says
   `delay = 0.5`, and the workers crawl with the shipped politeness (CROVIA_POLITE_DELAYS=1,
   robots.txt obeyed) and DOWNLOAD_DELAY=0, so a host's delay is exactly the feed's. The feeds are
   listed host by host, as a feeds.toml grouped by publisher is, and each worker runs with
   CONCURRENT_REQUESTS=2 and takes `--batch` = 2 x feeds-per-host jobs at a time: one child crawl
   covers two hosts, and one worker is the bottleneck. One sequencer signs. For each worker count
   the whole `crovia crawl --redis URL` is timed, from the request to the run record, on a fresh
   Redis and ledger (workers and sequencer already waiting, as in a running cluster); the counts
   alternate (1, 2, 4, then 4, 2, 1, ...) and the median of `--rounds` is printed as feeds/s and
   as the speed-up of 2 and 4 workers against 1. The feed servers' arrival times give the closest
   two requests any host received: never under its delay, or the shared slot failed.

   Why the speed-up is bounded. Every worker takes a host's slot in Redis before each request and
   the next request to the host starts only after the previous response and the host's delay
   (crovia_spider/cluster/politeness.py), whichever worker sent it. So N workers never fetch from
   one host faster than one worker does: a host gives at most one feed per delay, and the
   cluster at most hosts / delay feeds a second (16/s for 8 hosts at 0.5 s), the floor printed
   as "every host at once". An added worker helps only where one worker leaves hosts idle: when
   there are more hosts than one worker's concurrency covers (here 2 of 8), and when fetching,
   parsing and page captures take time the delays do not hide. Once the workers cover every
   host, or their jobs are all on one host, another worker adds nothing but start-up; the
   constant part of a run (a child crawl's start-up per batch, the sequencer's crawl, its end and
   the seal) is not divided either, so the measured speed-up stays under the worker count.

2. The sequencer's ceiling. `--ceiling-feeds` feeds of `--ceiling-items` items, workers without
   delays. The sequencer enqueues the run's jobs and is then killed (SIGKILL, a machine dying);
   the workers do every job while no sequencer runs, and stop; a new sequencer takes the run up
   where it was (the documented take-over: same host, same ledger). Timed: from its start, with
   every result already in Redis, to the run record (`crovia crawl --redis` returns): process
   start-up, every result checked (types, bodies against digests), the pipelines, signing,
   appending, the crawl's end and the seal. The ledger file is watched meanwhile: the steady
   rate is the leaves appended between the first and the last whole batch of 500 (the crawl's
   CROVIA_ISSUE_BATCH) over the time between them, the sequencer's ceiling without its fixed part.
   That part is several seconds a run: start-up, the seal, and the crawl's end, up to 5 s after
   its last item (Scrapy's engine finds an idle crawl on its 5 s heartbeat when no download's
   answer prompts it sooner, and the sequencer's crawl downloads nothing). Against it, in the
   same run, `Ledger.issue` signs and appends the same number of envelopes in batches of 500 in
   this process; the ratio says how much more than signing and appending the sequencer does per
   leaf.

Benches report ratios measured in the same run and never assert times; the load average is
printed, and on a shared machine the wall times swing with it.
Usage: python bench/cluster_bench.py [--rounds N] [--hosts N] [--feeds-per-host N]
[--items-per-feed N] [--delay S] [--ceiling-feeds N] [--ceiling-items N] [--workdir DIR] [--quick].
About 7 minutes at the default size; --quick, about a minute.
Offline (loopback only); needs /usr/bin/redis-server (or CROVIA_REDIS_SERVER).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import nacl.signing
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.crawl_bench import write_feeds  # noqa: E402
from bench.ledger_bench import load_average  # noqa: E402
from crovia_spider.cluster import keys, runstate  # noqa: E402
from ledger.store import LEDGER_FILE, Ledger  # noqa: E402
from tests.cluster.harness import Cluster  # noqa: E402
from tests.cluster.redis_server import RedisServer  # noqa: E402
from tests.feedserver import FeedServer  # noqa: E402
from tests.vectors.make_vectors import sample_envelope  # noqa: E402

WORKER_COUNTS = (1, 2, 4)
CONCURRENCY = 2  # a worker's CONCURRENT_REQUESTS: it covers two hosts at a time
ISSUE_BATCH = 500  # the crawl's default CROVIA_ISSUE_BATCH
QUIET = ("-s", "LOG_LEVEL=INFO")
READY_SECONDS = 60.0
POLL = 0.02
CRAWL_SECONDS = 900.0


def main() -> int:
    args = parse_args()
    with contextlib.ExitStack() as stack:
        work = Path(args.workdir) if args.workdir else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="crovia-cluster-bench-")))  # fmt: skip
        work.mkdir(parents=True, exist_ok=True)
        www = work / "www"
        www.mkdir(exist_ok=True)
        servers = [
            stack.enter_context(FeedServer(www, host=f"127.0.0.{2 + n}")) for n in range(args.hosts)
        ]
        print(f"load average at start (1, 5, 15 min): {load_average()}", flush=True)
        times = throughput(work, servers, args)
        report_throughput(times, args)
        ceiling = sequencer_ceiling(work, servers, args)
        report_ceiling(ceiling, work / "issue-floor")
    print(f"load average (1, 5, 15 min): {load_average()} on {os.cpu_count()} cores")
    return 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hosts", type=int, default=8, help="loopback hosts, 127.0.0.2 and up")
    parser.add_argument("--feeds-per-host", type=int, default=20)
    parser.add_argument("--items-per-feed", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.5, help="each feed's delay, seconds")
    parser.add_argument("--ceiling-feeds", type=int, default=50)
    parser.add_argument("--ceiling-items", type=int, default=200)
    parser.add_argument("--workdir", help="keep every run's ledger and logs here (a new directory)")
    parser.add_argument(
        "--quick", action="store_true",
        help="the smallest size, for the smoke test: 4 hosts of 2 feeds, one round, 8 x 125 items",
    )  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.hosts, args.feeds_per_host, args.items_per_feed = 1, 4, 2, 3
        args.ceiling_feeds, args.ceiling_items = 8, 125  # 1,008 leaves: two whole batches
    if not 1 <= args.hosts <= 250:
        parser.error("--hosts is 1 to 250 (127.0.0.2 to 127.0.0.251)")
    return args


# -- 1. throughput against politeness-bound hosts ---------------------------------------------


def polite_feeds(www: Path, servers: list[FeedServer], args: argparse.Namespace) -> list[dict]:
    """The feeds.toml tables, host by host: feed i of host h is `h<h>_<i>`, with its delay."""
    per_host = args.feeds_per_host
    names = write_feeds(www, len(servers) * per_host * args.items_per_feed, len(servers) * per_host)
    return [
        {"vendor": f"h{2 + h}_{i}", "url": servers[h].url(names[h * per_host + i]),
         "delay": args.delay}
        for h in range(len(servers)) for i in range(per_host)
    ]  # fmt: skip


def throughput(
    work: Path, servers: list[FeedServer], args: argparse.Namespace
) -> dict[int, list[float]]:
    """Seconds of `crovia crawl --redis` per worker count, one list entry a round."""
    feeds = polite_feeds(work / "www", servers, args)
    times: dict[int, list[float]] = {count: [] for count in WORKER_COUNTS}
    gaps = []
    for round_number in range(args.rounds):
        order = WORKER_COUNTS if round_number % 2 == 0 else WORKER_COUNTS[::-1]
        for count in order:
            directory = work / f"workers{count}_round{round_number}"
            for server in servers:
                server.clear()
            times[count].append(polite_crawl(directory, feeds, count, args))
            gaps.append(closest_requests(servers))
        line = ", ".join(f"{c} worker{'s' * (c > 1)} {times[c][-1]:.2f}s" for c in WORKER_COUNTS)
        print(f"round {round_number + 1}: {line}", flush=True)
    held = "held" if min(gaps) >= args.delay else "was BROKEN"
    print(f"closest two requests to one host, any run: {min(gaps):.3f} s apart (delay"
          f" {args.delay:g} s: the slot shared by the workers {held})")  # fmt: skip
    return times


def closest_requests(servers: list[FeedServer]) -> float:
    """The shortest time between two requests one host received (robots.txt included)."""
    gaps = [b.at - a.at for s in servers for a, b in zip(s.requests, s.requests[1:], strict=False)]
    return min(gaps, default=float("inf"))


def polite_crawl(directory: Path, feeds: list[dict], workers: int, args) -> float:
    """One timed `crovia crawl --redis` with `workers` workers, on a fresh Redis and ledger."""
    directory.mkdir(parents=True)
    settings = [*QUIET, "-s", "CROVIA_POLITE_DELAYS=1", "-s", "DOWNLOAD_DELAY=0",
                "-s", f"CONCURRENT_REQUESTS={CONCURRENCY}"]  # fmt: skip
    batch = str(CONCURRENCY * args.feeds_per_host)
    with cluster_on(directory) as (redis_server, cluster):
        cluster.feeds(feeds)
        cluster.sequencer(*QUIET)
        for n in range(workers):
            cluster.worker(f"w{n + 1}", "--batch", batch, *settings, fast=False)
        wait_ready(redis_server, cluster, workers)
        started = time.perf_counter()
        done = cluster.crawl(timeout=CRAWL_SECONDS)
        elapsed = time.perf_counter() - started
        expect_run(done, cluster, len(feeds))
    return elapsed


@contextlib.contextmanager
def cluster_on(directory: Path) -> Iterator[tuple[RedisServer, Cluster]]:
    with (
        RedisServer(directory / "redis") as redis_server,
        Cluster(directory, redis_server.url) as cluster,
    ):
        yield redis_server, cluster


def wait_ready(redis_server: RedisServer, cluster: Cluster, workers: int) -> None:
    """Until the sequencer holds its claim and every worker has said it lives."""
    client = redis_server.client()
    deadline = time.monotonic() + READY_SECONDS
    try:
        while time.monotonic() < deadline:
            live = sum(1 for _ in client.scan_iter(keys.WORKERS_PATTERN))
            if client.exists(keys.SEQUENCER) and live == workers:
                return
            time.sleep(0.1)
    finally:
        client.close()
    sys.exit(f"bench: the cluster was not ready in {READY_SECONDS:g} s:\n" + tails(cluster))


def expect_run(done: subprocess.CompletedProcess[str], cluster: Cluster, feeds: int) -> None:
    if done.returncode != 0 or f" {feeds} feeds (0 failed)" not in done.stdout:
        sys.exit(f"bench: crawl --redis failed:\n{done.stdout}{done.stderr}\n" + tails(cluster))


def tails(cluster: Cluster) -> str:
    return "\n".join(f"-- {name}:\n{cluster.log(name)[-2000:]}" for name in cluster.logs)


def report_throughput(times: dict[int, list[float]], args: argparse.Namespace) -> None:
    feeds = args.hosts * args.feeds_per_host
    per_host = args.feeds_per_host * args.delay
    one_worker = per_host * -(-args.hosts // CONCURRENCY)
    print(
        f"{feeds} feeds of {args.items_per_feed} items on {args.hosts} loopback hosts, delay"
        f" {args.delay:g} s a host, CONCURRENT_REQUESTS={CONCURRENCY} and --batch"
        f" {CONCURRENCY * args.feeds_per_host} a worker, {args.rounds} rounds"
    )
    print(
        f"politeness floor: {per_host:.1f} s with every host at once"
        f" ({args.hosts / args.delay:.1f} feeds/s), {one_worker:.1f} s for one worker covering"
        f" {CONCURRENCY} hosts at a time ({CONCURRENCY / args.delay:.1f} feeds/s)"
    )
    base = statistics.median(times[1])
    for count in WORKER_COUNTS:
        median = statistics.median(times[count])
        line = (
            f"{count} worker{'s' * (count > 1)}: median {median:.2f}s, {feeds / median:.2f} feeds/s"
        )
        if count > 1:
            line += f", speed-up {base / median:.2f}x against 1 worker"
        print(line, flush=True)


# -- 2. the sequencer's ceiling on results already in Redis ------------------------------------


class Ceiling(NamedTuple):
    fetches: int
    items: int
    seconds: float  # from the new sequencer's start to the run record
    batches: list[tuple[float, int]]  # (seconds since its start, leaves) at each whole batch


def sequencer_ceiling(work: Path, servers: list[FeedServer], args: argparse.Namespace) -> Ceiling:
    """A run whose every result was in Redis before its sequencer started, as that sequencer
    signed it."""
    www = work / "www" / "ceiling"
    www.mkdir()
    names = write_feeds(www, args.ceiling_feeds * args.ceiling_items, args.ceiling_feeds)
    server = servers[0]
    feeds = [{"vendor": f"c{n}", "url": server.url(f"ceiling/{name}")}
             for n, name in enumerate(names)]  # fmt: skip
    directory = work / "ceiling"
    directory.mkdir()
    with cluster_on(directory) as (redis_server, cluster):
        cluster.feeds(feeds)
        cluster.sequencer(*QUIET)
        wait_ready(redis_server, cluster, 0)
        crawl = subprocess.Popen(
            cluster.command("crawl", "--redis", cluster.url), cwd=ROOT, env=cluster.env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        client = redis_server.client()
        request = wait_for(
            client,
            cluster,
            lambda: jobs_enqueued(client, len(feeds), directory / "ledger"),
            "the run's jobs",
        )
        cluster.kill("sequencer")
        for n in range(2):
            cluster.worker(f"w{n + 1}", *QUIET)
        results = keys.results_key(request)
        wait_for(client, cluster, lambda: client.xlen(results) >= len(feeds), "every result")
        for n in range(2):
            terminate(cluster, f"w{n + 1}")
        started = time.perf_counter()
        cluster.sequencer(*QUIET, name="sequencer2")
        batches = watch_batches(directory / "ledger" / LEDGER_FILE, crawl, started)
        elapsed = time.perf_counter() - started
        client.close()
        output = crawl.stdout.read() if crawl.stdout else ""
        expect_run(subprocess.CompletedProcess([], crawl.returncode, output, ""), cluster,
                   len(feeds))  # fmt: skip
    counts = leaf_types(directory / "ledger")
    expected = {"AX.FETCH": len(feeds), "AX.OBS": len(feeds) * args.ceiling_items}
    if counts != expected:
        sys.exit(f"bench: the sequencer's ledger holds {dict(counts)}, expected {expected}")
    return Ceiling(len(feeds), len(feeds) * args.ceiling_items, elapsed, batches)


def watch_batches(
    ledger: Path, crawl: subprocess.Popen[str], started: float
) -> list[tuple[float, int]]:
    """Until `crawl` exits: (seconds since `started`, leaves) each time the ledger's line count
    reaches a whole number of issue batches, read incrementally (the file only grows)."""
    seen: list[tuple[float, int]] = []
    offset = lines = 0
    deadline = started + CRAWL_SECONDS
    while crawl.poll() is None:
        if time.perf_counter() > deadline:
            crawl.kill()
            sys.exit(f"bench: the sequencer's run took more than {CRAWL_SECONDS:g} s")
        if ledger.exists():
            with ledger.open("rb") as jsonl:
                jsonl.seek(offset)
                chunk = jsonl.read()
            offset += len(chunk)
            before, lines = lines, lines + chunk.count(b"\n")
            if lines // ISSUE_BATCH > before // ISSUE_BATCH:
                seen.append((time.perf_counter() - started, lines // ISSUE_BATCH * ISSUE_BATCH))
        time.sleep(POLL)
    return seen


def jobs_enqueued(client, count: int, ledger: Path) -> str:
    """The pending crawl request's id once its `count` jobs are on the jobs stream and the
    sequencer's run state (in its ledger directory) names them, else "". Killed between the two,
    a sequencer's successor enqueues the run's jobs again and refuses the first ones' results
    (docs/cluster.md): the bench would then wait for workers it has stopped (CI saw it)."""
    found = client.xrange(keys.JOBS)
    requests = {orjson.loads(fields[b"job"])["request"] for _, fields in found}
    if len(found) != count or len(requests) != 1:
        return ""
    request = requests.pop()
    state = runstate.load(ledger, request)
    return request if state is not None and state.jobs is not None else ""


def wait_for(client, cluster: Cluster, ready, what: str):
    deadline = time.monotonic() + CRAWL_SECONDS
    while time.monotonic() < deadline:
        if found := ready():
            return found
        time.sleep(0.05)
    sys.exit(f"bench: {what} never came:\n" + tails(cluster))


def terminate(cluster: Cluster, name: str) -> None:
    """Stop one daemon as `Cluster.stop` does, and wait for it."""
    process = cluster.processes[name]
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def leaf_types(ledger_dir: Path) -> Counter[str]:
    with (ledger_dir / "axiom_ledger.jsonl").open("rb") as lines:
        return Counter(json.loads(line)["axiom_type"] for line in lines)


def report_ceiling(ceiling: Ceiling, floor_dir: Path) -> None:
    leaves = ceiling.fetches + ceiling.items
    envelopes = [sample_envelope(n) for n in range(leaves)]
    started = time.perf_counter()
    with Ledger.open(floor_dir, signing_key=nacl.signing.SigningKey.generate()) as ledger:
        for offset in range(0, leaves, ISSUE_BATCH):
            ledger.issue(envelopes[offset : offset + ISSUE_BATCH])
    floor = time.perf_counter() - started
    seconds = ceiling.seconds
    print(
        f"sequencer on results already in Redis: {leaves} leaves ({ceiling.fetches} fetch"
        f" records, {ceiling.items} items) in {seconds:.2f}s from its start to the run record,"
        f" {leaves / seconds:,.0f} leaves/s end to end"
    )
    if len(ceiling.batches) >= 2:  # the rate between whole batches: start-up and seal apart
        (first, low), (last, high) = ceiling.batches[0], ceiling.batches[-1]
        rate = (high - low) / (last - first)
        fixed = seconds - leaves / rate
        print(
            f"sequencer steady rate: {rate:,.0f} leaves/s (leaves {low} to {high}, whole batches"
            f" of {ISSUE_BATCH}); the rest of its time, {fixed:.2f}s, is start-up, the crawl's"
            " end and the seal"
        )
    else:
        rate = leaves / seconds
        print(f"sequencer steady rate: not measured (fewer than {2 * ISSUE_BATCH} leaves)")
    print(
        f"Ledger.issue alone, same run: {leaves} envelopes in {floor:.2f}s,"
        f" {leaves / floor:,.0f}/s; ratio Ledger.issue/sequencer {leaves / floor / rate:.1f}x"
        " (steady rate)"
    )


if __name__ == "__main__":
    sys.exit(main())
