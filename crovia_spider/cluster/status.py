"""What a cluster is doing, read from Redis: live workers, the queue, the sequencer's claim.

`crovia workers` prints it; `cluster_metrics` gives it as Prometheus gauges and counters
(queue depth, age of the oldest job, redeliveries, refused results, live workers).
"""

from __future__ import annotations

import json
from typing import Any

from crovia_spider.cluster import keys
from crovia_spider.cluster.connection import connect, ensure_group, text


def _age(stream_id: str, now: float) -> float:
    """Seconds since a stream id's time part (milliseconds)."""
    try:
        return max(0.0, now - int(stream_id.split("-")[0]) / 1000)
    except ValueError:
        return 0.0


def cluster_status(url: str, now: float) -> dict[str, Any]:
    client = connect(url)
    ensure_group(client, keys.JOBS, keys.JOBS_GROUP)
    ensure_group(client, keys.RUNS, keys.RUNS_GROUP)
    workers = []
    for key in sorted(client.scan_iter(match=keys.WORKERS_PATTERN, count=500)):
        found = {text(k): text(v) for k, v in client.hgetall(key).items()}
        if not found:
            continue  # expired meanwhile
        name = text(key)[len(keys.worker_key("")) :]
        workers.append(
            {
                "name": name,
                "host": found.get("host", ""),
                "pid": found.get("pid", ""),
                "started": found.get("started", ""),
                "heartbeat": found.get("heartbeat", ""),
                "jobs": found.get("jobs", ""),
            }
        )
    length = client.xlen(keys.JOBS)
    pending = client.xpending(keys.JOBS, keys.JOBS_GROUP)
    taken = int(pending.get("pending", 0))
    oldest = client.xrange(keys.JOBS, count=1)
    stats = {text(k): int(v) for k, v in client.hgetall(keys.STATS).items()}
    runs_pending = client.xlen(keys.RUNS)
    held = text(client.get(keys.SEQUENCER))
    try:
        sequencer = json.loads(held) if held else None
    except ValueError:
        sequencer = {"host": "?", "pid": "?", "ledger": "?", "started": "?"}
    if sequencer:
        sequencer.pop("token", None)
    return {
        "sequencer": sequencer,
        "checkpoint": text(client.get(keys.CHECKPOINT)),
        "queue": {
            "waiting": max(0, length - taken),
            "pending": taken,
            "oldest_seconds": _age(text(oldest[0][0]), now) if oldest else 0.0,
            "redelivered": stats.get(keys.REDELIVERED, 0),
            "refused": stats.get(keys.REFUSED, 0),
            "runs_waiting": runs_pending,
        },
        "workers": workers,
    }


def cluster_registry(status: dict[str, Any]) -> Any:
    """The cluster's Prometheus metrics, from a `cluster_status` reading."""
    from prometheus_client import CollectorRegistry, Counter, Gauge

    registry = CollectorRegistry(auto_describe=False)
    queue = status["queue"]
    gauges = (
        ("crovia_cluster_jobs_waiting", "fetch jobs no worker has taken yet", queue["waiting"]),
        ("crovia_cluster_jobs_taken", "fetch jobs a worker took and has not finished",
         queue["pending"]),
        ("crovia_cluster_oldest_job_age_seconds", "age of the oldest job not finished",
         queue["oldest_seconds"]),
        ("crovia_cluster_crawl_requests_waiting", "crawl requests the sequencer has not finished",
         queue["runs_waiting"]),
        ("crovia_cluster_workers_alive", "workers whose heartbeat has not lapsed",
         len(status["workers"])),
        ("crovia_cluster_sequencer_up", "1 while a sequencer holds the claim",
         1 if status["sequencer"] else 0),
    )  # fmt: skip
    for name, doc, value in gauges:
        Gauge(name, doc, registry=registry).set(value)
    counters = (
        ("crovia_cluster_jobs_redelivered", "jobs taken over from a silent worker",
         queue["redelivered"]),
        ("crovia_cluster_results_refused", "workers' results the sequencer refused",
         queue["refused"]),
    )  # fmt: skip
    for name, doc, value in counters:
        Counter(name, doc, registry=registry).inc(value)
    return registry
