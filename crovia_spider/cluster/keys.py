"""Every Redis key and stream of a crawl cluster, in one place (docs/cluster.md, "In Redis").

All live under one prefix, `crovia:`, so one Redis can be shared with other programs (a separate
database number, `redis://host/1`, keeps clusters apart). Streams carry work and results with
consumer groups (at-least-once: a message stays pending until its consumer acknowledges it); the
rest are small strings and hashes.
"""

from __future__ import annotations

PREFIX = "crovia:"

# Crawl requests (`crovia crawl --redis`, the scheduler): one message a spider's run, read by the
# sequencer's group and acknowledged once the run record is written.
RUNS = PREFIX + "runs"
RUNS_GROUP = "sequencer"
# Fetch jobs, one a source of a run, read by the workers' group; a job pending past the job
# timeout is claimed by another worker (XAUTOCLAIM).
JOBS = PREFIX + "jobs"
JOBS_GROUP = "workers"
# Refused results (a body not matching its digest, a field of the wrong type, bad JSON): kept for
# people to read, never signed. Capped.
REJECTS = PREFIX + "rejects"
REJECTS_MAX = 10_000
# The one sequencer: {"host", "pid", "ledger", "started"} while it lives (a heartbeat renews it).
SEQUENCER = PREFIX + "sequencer"
# The newest checkpoint (seal) the sequencer wrote, "LEAF_COUNT MERKLE_ROOT": compare-and-swap.
CHECKPOINT = PREFIX + "checkpoint"
# Counters: redeliveries (jobs claimed from a silent worker), refused results.
STATS = PREFIX + "stats"
REDELIVERED = "redelivered"
REFUSED = "refused"


def run_key(request_id: str) -> str:
    """A run's hash: run_id, spider, started_at, jobs, ledger_bytes (the sequencer sets them)."""
    return f"{PREFIX}run:{request_id}"


def results_key(request_id: str) -> str:
    """A run's results stream: one message a job done by a worker (or two, if done twice)."""
    return f"{PREFIX}results:{request_id}"


def done_key(request_id: str) -> str:
    """A run's end: a list holding its summary once, for `crovia crawl --redis` to wait on."""
    return f"{PREFIX}done:{request_id}"


def cancel_key(request_id: str) -> str:
    """Set by a `crovia crawl --redis` that was stopped: its request is never run, or its run
    stops (the sequencer reads it before and while running the request)."""
    return f"{PREFIX}cancel:{request_id}"


def worker_key(name: str) -> str:
    """A live worker's hash (host, pid, started, heartbeat, jobs), expiring when it goes silent."""
    return f"{PREFIX}worker:{name}"


WORKERS_PATTERN = PREFIX + "worker:*"


def slot_key(host: str) -> str:
    """A host's politeness slot, shared by every worker (crovia_spider/cluster/politeness.py)."""
    return f"{PREFIX}slot:{host}"
