"""`crovia worker`, `crovia sequencer`, `crovia workers`: a crawl cluster on Redis.

docs/cluster.md. `--redis URL` defaults to CROVIA_REDIS_URL. A worker needs neither config nor
ledger key, only the sequencer's job public key to pin; the sequencer needs both, the ledger,
and to be the only one (crovia_spider/cluster/sequencer.py).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from crovia_spider.cli.crawl_cmds import settings_option
from crovia_spider.exceptions import ConfigError
from crovia_spider.options import env_default, setting


def redis_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redis", metavar="URL", default=env_default("CROVIA_REDIS_URL"),
        help="the cluster's Redis, redis://HOST:PORT/DB (default: $CROVIA_REDIS_URL)",
    )  # fmt: skip


def redis_url(args: argparse.Namespace) -> str:
    if not args.redis:
        raise ConfigError("no Redis given: --redis URL, or set CROVIA_REDIS_URL")
    return args.redis


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `crovia worker`, `crovia sequencer` and `crovia workers`."""
    worker = subparsers.add_parser(
        "worker",
        help="take fetch jobs from a cluster's Redis and crawl them (holds no key)",
        description="A crawl worker: takes fetch jobs from Redis, fetches and reads them with the"
        " project's spiders (fetch policy, robots.txt, politeness shared by every worker,"
        " parser worker), and sends the results back for the sequencer to sign. Holds no key,"
        " writes no ledger. Runs until stopped (SIGTERM, Ctrl-C).",
    )
    redis_option(worker)
    worker.add_argument("--name", default="", help="its name (default: HOST-PID)")
    worker.add_argument(
        "--batch", type=int, default=20, metavar="N",
        help="jobs one child crawl takes at most (default 20)",
    )  # fmt: skip
    worker.add_argument(
        "--job-timeout", type=float, default=setting("CROVIA_JOB_TIMEOUT"),
        metavar="SECONDS",
        help="take over a job another worker left silent this long (CROVIA_JOB_TIMEOUT)",
    )  # fmt: skip
    worker.add_argument(
        "--heartbeat", type=float, default=5.0, metavar="SECONDS",
        help="how often it says it lives (default 5)",
    )  # fmt: skip
    worker.add_argument(
        "--idle-exit", type=float, default=0.0, metavar="SECONDS",
        help="stop after this long without a job (default: never)",
    )  # fmt: skip
    worker.add_argument(
        "--sequencer-key", default=None, metavar="FILE",
        help="the sequencer's job public key it pins (the sequencer's jobs.key.pub, or its 64"
        " hex): only jobs it signed are run (default: $CROVIA_SEQUENCER_KEY)",
    )  # fmt: skip
    worker.add_argument(
        "--allow-private", action="append", default=[], metavar="HOST[:PORT]",
        help="let its fetches reach this host on a loopback or private address (tests, an"
        " intranet's feeds); repeatable. Without it a worker fetches only global addresses,"
        " whatever a job names",
    )  # fmt: skip
    settings_option(worker, "its crawls")
    worker.set_defaults(handler=cmd_worker)

    sequencer = subparsers.add_parser(
        "sequencer",
        help="the cluster's one signer: check workers' results, sign, append, seal",
        description="The one process of a cluster that holds the signing key and the ledger:"
        " takes crawl requests (crovia crawl --redis), enqueues their fetch jobs, checks each"
        " worker's result, and fingerprints, dedupes, classifies, signs, appends and seals as a"
        " local crawl does. Refuses to start if another sequencer runs against the same Redis"
        " or ledger. Runs until stopped.",
    )
    redis_option(sequencer)
    sequencer.add_argument(
        "--ledger-dir", type=Path, default=None, metavar="DIR",
        help="the ledger (default: $CROVIA_LEDGER_DIR)",
    )  # fmt: skip
    sequencer.add_argument(
        "--once", action="store_true", help="stop when no crawl request is waiting"
    )
    sequencer.add_argument(
        "--job-key", type=Path, default=None, metavar="FILE",
        help="the key that signs its fetch jobs, made with FILE.pub beside it if absent; never"
        " the ledger's key (default: $CROVIA_JOB_KEY_FILE)",
    )  # fmt: skip
    settings_option(sequencer, "its crawls")
    sequencer.set_defaults(handler=cmd_sequencer)

    workers = subparsers.add_parser(
        "workers",
        help="list a cluster's live workers, its queue and the sequencer",
        description="The workers that said they live in the last heartbeats (their jobs and"
        " last heartbeat), the jobs waiting and pending, redeliveries and refused results, and"
        " the sequencer's claim.",
    )
    redis_option(workers)
    workers.add_argument("--json", action="store_true", help="one JSON object")
    workers.add_argument(
        "--metrics-file", metavar="FILE",
        help="also write the cluster's Prometheus metrics there, atomically (node-exporter's"
        " textfile collector; run it from a timer)",
    )  # fmt: skip
    workers.add_argument(
        "--prometheus", action="store_true",
        help="print the metrics in Prometheus' text format instead",
    )  # fmt: skip
    workers.set_defaults(handler=cmd_workers)


def cmd_worker(args: argparse.Namespace) -> int:
    from crovia_spider.cluster.jobs import parse_allowed
    from crovia_spider.cluster.worker import Worker, WorkerOptions

    try:
        parse_allowed(args.allow_private)
    except ValueError as exc:
        raise ConfigError(f"--allow-private: {exc}") from None
    options = WorkerOptions(
        url=redis_url(args),
        name=args.name,
        batch=max(1, args.batch),
        job_timeout=max(1.0, args.job_timeout),
        heartbeat=max(0.5, args.heartbeat),
        settings=args.settings,
        idle_exit=args.idle_exit,
        sequencer_key=sequencer_key(args.sequencer_key),
        allow_private=args.allow_private,
    )
    return Worker(options).run()


def sequencer_key(given: str | None) -> str:
    """The sequencer's job public key a worker pins, as 64 hex: `given` (or
    CROVIA_SEQUENCER_KEY) is the hex itself or a file holding it. ConfigError when there is none
    or it is not one: a worker never runs jobs it cannot check."""
    value = given if given is not None else env_default("CROVIA_SEQUENCER_KEY")
    if not value:
        raise ConfigError(
            "a worker runs only jobs its sequencer signed: give the sequencer's job public key"
            " with --sequencer-key FILE (the sequencer's jobs.key.pub) or CROVIA_SEQUENCER_KEY"
        )
    if re.fullmatch(r"[0-9a-fA-F]{64}", value):
        return value.lower()
    path = Path(value)
    try:
        if not path.is_file():
            raise ConfigError(f"--sequencer-key {path}: not a regular file")
        text = path.read_bytes()[:4096].decode("ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--sequencer-key {path}: cannot be read ({exc})") from None
    if not re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise ConfigError(f"--sequencer-key {path}: not a public key (64 hex characters)")
    return text.lower()


def cmd_sequencer(args: argparse.Namespace) -> int:
    from crovia_spider.cluster.sequencer import Sequencer, SequencerOptions
    from crovia_spider.options import path_default

    ledger_dir = args.ledger_dir or path_default("CROVIA_LEDGER_DIR")
    options = SequencerOptions(
        url=redis_url(args),
        ledger_dir=ledger_dir,
        settings=args.settings,
        once=args.once,
        job_key=args.job_key or path_default("CROVIA_JOB_KEY_FILE"),
        signing_key=path_default("CROVIA_SIGNING_KEY_FILE"),
    )
    return Sequencer(options).run()


def cmd_workers(args: argparse.Namespace) -> int:
    from crovia_spider.cluster.status import cluster_status

    status = cluster_status(redis_url(args), time.time())
    if args.metrics_file or args.prometheus:
        from prometheus_client import generate_latest, write_to_textfile

        from crovia_spider.cluster.status import cluster_registry

        registry = cluster_registry(status)
        if args.metrics_file:
            write_to_textfile(args.metrics_file, registry)
        if args.prometheus:
            sys.stdout.write(generate_latest(registry).decode())
            return 0
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    sequencer = status["sequencer"]
    if sequencer:
        print(
            f"sequencer: {sequencer.get('host')} pid {sequencer.get('pid')}, ledger"
            f" {sequencer.get('ledger')}, since {sequencer.get('started')}"
        )
    else:
        print("sequencer: none running")
    queue = status["queue"]
    print(
        f"jobs: {queue['waiting']} waiting, {queue['pending']} taken, oldest"
        f" {queue['oldest_seconds']:.0f} s; {queue['redelivered']} redelivered,"
        f" {queue['refused']} results refused; {queue['runs_waiting']} crawl request(s)"
    )
    if not status["workers"]:
        print("workers: none alive")
    for worker in status["workers"]:
        jobs = worker["jobs"] or "idle"
        print(
            f"  {worker['name']}  host {worker['host']} pid {worker['pid']}  last heartbeat"
            f" {worker['heartbeat']}  jobs: {jobs}"
        )
    sys.stdout.flush()
    return 0
