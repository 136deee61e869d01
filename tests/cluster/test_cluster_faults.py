"""A crawl cluster under faults (docs/cluster.md): a worker SIGKILLed mid-job, the sequencer
SIGKILLed mid-run and restarted, Redis restarted mid-run, results a worker must not get signed, a
second sequencer. Every process is real and on 127.0.0.1; after each fault the ledger holds what
a local crawl of the same feeds gives (each source's fetch record once, each item once) and
`crovia audit` passes.

A fetch that must be in flight when the fault strikes is held by a gate (`gated`): the feed
server answers it only when the test opens the gate, so no test depends on how fast anything is.
Every wait is a bounded poll on a condition.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from crovia_spider.cluster import keys
from tests.cluster.harness import (
    FIXTURES,
    TEST_HOSTS,
    Cluster,
    feeds_on_hosts,
    ledger_lines,
    what_was_recorded,
)
from tests.cluster.redis_server import RedisServer
from tests.crawl import PROJECT_ROOT, run_crawl
from tests.feedserver import FeedServer, Reply

TIMEOUT = 120.0  # the bound of every wait: a failure, never a pace
POLL = 0.05
JOB_TIMEOUT = ("--job-timeout", "3")
GATED_FILE = FIXTURES / "openai_news_rss_prefix.xml"


def wait_until(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
    """Poll `condition` until it gives something true, and return it; fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g} s for {what}")
        time.sleep(POLL)
    return found


@contextlib.contextmanager
def gated(path: str) -> Iterator[tuple[FeedServer, str, threading.Event]]:
    """A feed server on 127.0.0.1 (a host of its own, so the held fetch holds no other feed's
    politeness slot) whose `path` answers its first request only once the gate is open, and at
    once afterwards: (server, the feed's URL, the gate)."""
    gate = threading.Event()
    data = GATED_FILE.read_bytes()

    def held() -> bytes:
        gate.wait(TIMEOUT)
        return data

    headers = {"Content-Type": "application/rss+xml"}
    with FeedServer(FIXTURES) as server:
        url = server.script(path, Reply(200, held, headers), Reply(200, data, headers))
        try:
            yield server, url, gate
        finally:
            gate.set()  # the held answer's thread ends


def start_crawl(cluster: Cluster) -> subprocess.Popen[str]:
    """`crovia crawl --redis URL`, started and not waited for."""
    return subprocess.Popen(
        cluster.command("crawl", "--redis", cluster.url),
        cwd=PROJECT_ROOT,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finished(cluster: Cluster, crawl: subprocess.Popen[str]) -> str:
    """The output of the crawl once it ended; it must have exited 0."""
    out, _ = crawl.communicate(timeout=TIMEOUT)
    assert crawl.returncode == 0, out + cluster.log("sequencer") + cluster.log("sequencer2")
    return out


def status(cluster: Cluster) -> dict[str, Any]:
    done = cluster.run("workers", "--redis", cluster.url, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def assert_as_local_crawl(tmp_path: Path, feeds: list[dict], ledger_dir: Path) -> None:
    """The ledger holds what a local crawl of `feeds` gives: each fetch record and item once."""
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    local = run_crawl(local_dir, feeds, timeout=TIMEOUT)
    assert local.returncode == 0, local.stderr[-3000:]
    local_items, local_fetches = what_was_recorded(local_dir / "ledger")
    items, fetches = what_was_recorded(ledger_dir)
    assert len(local_fetches) == len(feeds) and local_items
    assert fetches == local_fetches
    assert items == local_items


def assert_audit_clean(cluster: Cluster, ledger_dir: Path) -> None:
    audit = cluster.run("audit", "--ledger-dir", str(ledger_dir))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert f"audit ok: {len(ledger_lines(ledger_dir))} leaves" in audit.stdout


def run_records(ledger_dir: Path) -> list[dict[str, Any]]:
    path = ledger_dir / "runs.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


# -- 1. a worker dies mid-job ----------------------------------------------------------------------


def test_a_job_of_a_worker_killed_mid_fetch_is_taken_over_and_done_once(
    tmp_path: Path, redis_server
) -> None:
    """w1 is SIGKILLed (with its crawl) while its fetch of `held.xml` is unanswered: w2 takes
    the job over once it has been silent for the job timeout, and the run signs every source's
    fetch record and every item once, as a local crawl does."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    with feeds_on_hosts(hosts=2, per_host=3) as (_, feeds), gated("held.xml") as (server, url, _):
        feeds = [*feeds, {"vendor": "held", "url": url}]
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            cluster.worker("w1", *JOB_TIMEOUT)
            crawl = start_crawl(cluster)
            assert server.wait_for_request("held.xml", TIMEOUT), cluster.log("w1")
            cluster.kill("w1")
            cluster.worker("w2", *JOB_TIMEOUT)
            out = finished(cluster, crawl)
            assert f"{len(feeds)} feeds (0 failed)" in out, out
            queue = status(cluster)["queue"]
        assert len(server.requests_for("held.xml")) == 2
        assert "took over" in cluster.log("w2")
        assert queue["redelivered"] >= 1 and queue["pending"] == 0 and queue["waiting"] == 0
        assert_as_local_crawl(tmp_path, feeds, cluster_dir / "ledger")
    assert_audit_clean(cluster, cluster_dir / "ledger")


# -- 2. the sequencer dies mid-run -----------------------------------------------------------------


def test_a_sequencer_killed_mid_run_is_restarted_and_finishes_the_run_once(
    tmp_path: Path, redis_server
) -> None:
    """The sequencer is SIGKILLed (with its crawl) while it issues a run in batches of five,
    before the run record; a new one takes the same run up (its request was pending), signs no
    fetch record or item twice, writes the run record, and the waiting crawl gets its answer."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    ledger_dir = cluster_dir / "ledger"
    batch = ("-s", "CROVIA_ISSUE_BATCH=5")
    with (
        feeds_on_hosts(hosts=6, per_host=5) as (_, feeds),
        gated("held.xml") as (server, url, gate),
    ):
        feeds = [*feeds, {"vendor": "held", "url": url}]
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer(*batch)
            cluster.worker("w1", *JOB_TIMEOUT)
            cluster.worker("w2", *JOB_TIMEOUT)
            crawl = start_crawl(cluster)
            # Issuing: items are in the ledger, the held source keeps the run from ending.
            wait_until(lambda: items_so_far(ledger_dir) >= 10, "items issued by the first one")
            cluster.kill("sequencer")
            assert not run_records(ledger_dir)
            issued = items_so_far(ledger_dir)
            cluster.sequencer(*batch, name="sequencer2")
            wait_until(lambda: "took over the claim" in cluster.log("sequencer2"), "the claim")
            gate.set()
            out = finished(cluster, crawl)
            assert f"{len(feeds)} feeds (0 failed)" in out, out
        assert server.wait_for_request("held.xml", 0)
        assert items_so_far(ledger_dir) > issued
        records = run_records(ledger_dir)
        assert len(records) == 1 and records[0]["outcome"] == "finished", records
        assert len(run_hashes(ledger_dir)) == 1  # every fetch record of the one run
        targets = Counter(
            (
                e["body"]["spider_record"]["vendor"],
                e["subject"]["target_id"],
                e["body"]["spider_record"]["fingerprint"],
            )
            for e in ledger_lines(ledger_dir)
            if e["axiom_type"] == "AX.OBS"
        )
        assert max(targets.values()) == 1
        assert_as_local_crawl(tmp_path, feeds, ledger_dir)
    assert_audit_clean(cluster, ledger_dir)


def items_so_far(ledger_dir: Path) -> int:
    """The items in a ledger being written (a line still being written, or torn, is left out)."""
    path = ledger_dir / "axiom_ledger.jsonl"
    count = 0
    for line in path.read_bytes().splitlines() if path.exists() else ():
        with contextlib.suppress(ValueError):
            count += json.loads(line)["axiom_type"] == "AX.OBS"
    return count


def fetch_envelopes(ledger_dir: Path) -> list[dict[str, Any]]:
    return [e for e in ledger_lines(ledger_dir) if e["axiom_type"] == "AX.FETCH"]


def run_hashes(ledger_dir: Path) -> set[str]:
    return {e["body"].get("run") for e in fetch_envelopes(ledger_dir)}


# -- 3. Redis restarts mid-run ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_a_run_rides_out_a_restart_of_redis(tmp_path: Path, how: str) -> None:
    """Redis (append-only, fsynced) is restarted, cleanly or after SIGKILL, while a worker is
    mid-job and the sequencer waits for results: the daemons and their crawls retry until it is
    back (a fetch whose politeness slot could not be had meanwhile is left pending and taken over,
    not recorded failed), and the run ends with every source's fetch record and items once."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    with (
        RedisServer(tmp_path / "redis", appendonly=True) as redis_server,
        feeds_on_hosts(hosts=2, per_host=3) as (_, feeds),
        gated("held.xml") as (server, url, gate),
    ):
        feeds = [*feeds, {"vendor": "held", "url": url}]
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            cluster.worker("w1", *JOB_TIMEOUT)
            crawl = start_crawl(cluster)
            assert server.wait_for_request("held.xml", TIMEOUT), cluster.log("w1")
            getattr(redis_server, how)()
            redis_server.restart()
            gate.set()
            out = finished(cluster, crawl)
            assert f"{len(feeds)} feeds (0 failed)" in out, out
            # Both daemons lived through it. In the sequencer's log, two processes share Redis:
            # the daemon (renewing its claim every 5 s) and its crawl (polling the results); each
            # said so once and once when it was back, if it asked Redis while it was gone (CI saw
            # both), never at each try.
            for name in ("sequencer", "w1"):
                assert cluster.processes[name].poll() is None, cluster.log(name)
            log = cluster.log("sequencer")
            retrying = log.count("retrying until it is back")
            assert retrying == log.count("is back") - retrying <= 2, log
        assert_as_local_crawl(tmp_path, feeds, cluster_dir / "ledger")
    assert_audit_clean(cluster, cluster_dir / "ledger")


# -- 4. results a worker must not get signed -------------------------------------------------------


def jobs_of_the_run(client: Any, count: int) -> dict[str, tuple[str, dict[bytes, bytes]]]:
    """vendor -> (job id, fields) of the `count` jobs the sequencer enqueued."""
    found = wait_until(
        lambda: len(entries := client.xrange(keys.JOBS)) == count and entries, "the run's jobs"
    )
    return {
        orjson.loads(fields[b"job"])["feed"]["vendor"]: (job_id.decode(), fields)
        for job_id, fields in found
    }


def results_elsewhere(
    tmp_path: Path, cluster: Cluster, jobs: dict[str, tuple[str, dict[bytes, bytes]]]
) -> dict[str, dict[bytes, bytes]]:
    """vendor -> what a worker makes of its job, done on a Redis of its own (a copy of the jobs),
    so that a test can bend a genuine result before the cluster's worker sends its own."""
    with RedisServer(tmp_path / "scratch") as scratch:
        client = scratch.client()
        for job_id, fields in jobs.values():
            client.xadd(keys.JOBS, fields, id=job_id)
        request = orjson.loads(next(iter(jobs.values()))[1][b"job"])["request"]
        cluster.start("copy", "worker", "--redis", scratch.url, "--name", "copy",
                      "--heartbeat", "1", "-s", "CROVIA_POLITE_DELAYS=0",
                      "--sequencer-key", str(cluster.job_pub),
                      *(a for h in TEST_HOSTS for a in ("--allow-private", h)))  # fmt: skip
        stream = keys.results_key(request)
        found = wait_until(
            lambda: len(entries := client.xrange(stream)) == len(jobs) and entries,
            "the results made elsewhere",
        )
        cluster.kill("copy")
    by_job = {fields[b"job"].decode(): fields for _, fields in found}
    return {vendor: by_job[job_id] for vendor, (job_id, _) in jobs.items()}


def bent(fields: dict[bytes, bytes], change: Callable[[dict[str, Any]], None]) -> dict:
    result = orjson.loads(fields[b"result"])
    change(result)
    return {**fields, b"worker": b"intruder", b"result": orjson.dumps(result)}


def test_results_refused_are_recorded_never_signed_and_the_real_ones_count(
    tmp_path: Path, redis_server
) -> None:
    """Four results reach the run's stream before the worker's own: a body that is not its
    digest's, JSON that does not parse, a fetch record field of the wrong type, an item of another
    run. Each is refused, kept in the rejects stream with its reason, counted, named in the run
    record's problems, and nothing of it is signed; the job stays open, and the worker's genuine
    result, arriving after, is signed: the ledger is a local crawl's."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    ledger_dir = cluster_dir / "ledger"
    client = redis_server.client()
    with feeds_on_hosts(hosts=1, per_host=4) as (_, feeds):
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            crawl = start_crawl(cluster)
            jobs = jobs_of_the_run(client, len(feeds))
            genuine = results_elsewhere(tmp_path, cluster, jobs)
            request = orjson.loads(jobs["h2_0"][1][b"job"])["request"]

            a = {**genuine["h2_0"], b"worker": b"intruder"}
            name = next(k for k in a if k.startswith(b"body:"))
            a[name] = a[name] + b"<!-- not what was fetched -->"
            tampered = hashlib.sha256(a[name]).hexdigest()
            b = {**genuine["h2_1"], b"worker": b"intruder", b"result": b'{"schema": "crovia.'}

            def wrong_type(result: dict[str, Any]) -> None:
                result["fetch"]["fetched_at"] = 20260427
                result["items"][0]["title"] = "INJECTED wrong type"

            def other_run(result: dict[str, Any]) -> None:
                result["items"][0]["parent_run_hash"] = "0" * 64
                result["items"][0]["title"] = "INJECTED other run"

            c = bent(genuine["h2_2"], wrong_type)
            d = bent(genuine["h2_3"], other_run)
            for fields in (a, b, c, d):
                client.xadd(keys.results_key(request), fields)
            cluster.worker("w1")
            out = finished(cluster, crawl)
            assert f"{len(feeds)} feeds (0 failed)" in out, out
            queue = status(cluster)["queue"]

        rejects = [
            {k.decode(): v.decode() for k, v in fields.items()}
            for _, fields in client.xrange(keys.REJECTS)
        ]
        reasons = {r["job"]: r["reason"] for r in rejects if r["worker"] == "intruder"}
        assert len(rejects) == 4 and all(r["run"] == request for r in rejects), rejects
        vendor_of = {job_id: vendor for vendor, (job_id, _) in jobs.items()}
        reasons = {vendor_of[job]: reason for job, reason in reasons.items()}
        assert "does not match its digest" in reasons["h2_0"]
        assert "not JSON" in reasons["h2_1"]
        assert "fetched_at is not of the type" in reasons["h2_2"]
        assert "parent_run_hash is not what its body gives" in reasons["h2_3"]
        assert queue["refused"] == 4
        (record,) = run_records(ledger_dir)
        for vendor, reason in reasons.items():
            assert any(vendor in p and reason in p for p in record["problems"]), record
        assert not any(feed["error"] for feed in record["feeds"])
        # Nothing of them signed or kept: the ledger is a local crawl's, and no byte of it cites
        # the tampered body or carries an injected title.
        ledger = b"".join(p.read_bytes() for p in ledger_dir.rglob("*") if p.is_file())
        assert tampered.encode() not in ledger and b"INJECTED" not in ledger
        assert_as_local_crawl(tmp_path, feeds, ledger_dir)
    assert_audit_clean(cluster, ledger_dir)


def test_a_job_whose_only_result_is_refused_is_recorded_failed_and_the_run_ends(
    tmp_path: Path, redis_server
) -> None:
    """A worker takes a job, and its answer (published and acknowledged in one MULTI, as a worker
    does) is refused: no better answer can come, so the source is recorded failed with the
    reason, the other sources are signed, and the run ends without waiting for its timeout."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    client = redis_server.client()
    with (
        feeds_on_hosts(hosts=1, per_host=3) as (_, feeds),
        Cluster(cluster_dir, redis_server.url) as cluster,
    ):
        cluster.feeds(feeds)
        cluster.sequencer()
        crawl = start_crawl(cluster)
        jobs = jobs_of_the_run(client, len(feeds))
        ((_, taken),) = client.xreadgroup(keys.JOBS_GROUP, "liar", {keys.JOBS: ">"}, count=1)
        ((job_id, fields),) = taken
        job = orjson.loads(fields[b"job"])
        pipe = client.pipeline(transaction=True)
        pipe.xadd(keys.results_key(job["request"]),
                  {b"job": job_id, b"worker": b"liar", b"result": b"[1, 2"})  # fmt: skip
        pipe.xack(keys.JOBS, keys.JOBS_GROUP, job_id)
        pipe.xdel(keys.JOBS, job_id)
        pipe.execute()
        cluster.worker("w1")
        out, _ = crawl.communicate(timeout=TIMEOUT)
        assert f"{len(feeds)} feeds (1 failed)" in out, out + cluster.log("sequencer")
    vendor = job["feed"]["vendor"]
    assert vendor in jobs
    (record,) = run_records(cluster_dir / "ledger")
    failed = {feed["vendor"]: feed["error"] for feed in record["feeds"] if feed["error"]}
    assert list(failed) == [vendor] and "not JSON" in failed[vendor], record
    fetched = {e["body"]["vendor"] for e in fetch_envelopes(cluster_dir / "ledger")}
    assert fetched == {feed["vendor"] for feed in feeds} - {vendor}
    assert_audit_clean(cluster, cluster_dir / "ledger")


# -- 5. one sequencer ------------------------------------------------------------------------------


def snapshot(ledger_dir: Path) -> dict[str, bytes]:
    """Every file of a ledger directory but the sequencer's lock file, by name."""
    return {
        str(p.relative_to(ledger_dir)): p.read_bytes()
        for p in sorted(ledger_dir.rglob("*"))
        if p.is_file() and p.name != "sequencer.lock"
    }


def test_a_second_sequencer_is_refused_and_writes_nothing(tmp_path: Path, redis_server) -> None:
    """While one sequencer runs, a second on the same Redis and ledger, or on the same Redis and
    another ledger, is refused naming the running one (exit 2); once it stopped, one on a copy of
    the ledger taken before the last run is refused, Redis's checkpoint not being among its
    seals. None of them writes a byte to a ledger or moves the checkpoint."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    ledger_dir, before_dir, other_dir = (
        cluster_dir / "ledger", tmp_path / "copy", tmp_path / "other",
    )  # fmt: skip
    client = redis_server.client()
    with feeds_on_hosts(hosts=1, per_host=2) as (_, feeds):
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            first = cluster.sequencer()
            cluster.worker("w1")
            assert cluster.crawl().returncode == 0, cluster.log("sequencer")
            shutil.copytree(ledger_dir, before_dir)
            assert cluster.crawl().returncode == 0, cluster.log("sequencer")
            claim = json.loads(client.get(keys.SEQUENCER))
            checkpoint = client.get(keys.CHECKPOINT)
            assert checkpoint and claim["pid"] == first.pid
            kept = snapshot(ledger_dir)
            for directory in (ledger_dir, other_dir):
                second = cluster.run("sequencer", "--redis", cluster.url, "--ledger-dir",
                                     str(directory))  # fmt: skip
                assert second.returncode == 2, second.stdout + second.stderr
                assert f"pid {first.pid}" in second.stderr, second.stderr
                assert claim["host"] in second.stderr, second.stderr
                assert json.loads(client.get(keys.SEQUENCER)) == claim
            assert snapshot(ledger_dir) == kept
            assert not other_dir.exists()  # not even a directory or a lock file
            cluster.stop()
            assert client.get(keys.SEQUENCER) is None
        behind = snapshot(before_dir)
        third = cluster.run("sequencer", "--redis", cluster.url, "--ledger-dir", str(before_dir))
        assert third.returncode == 2, third.stdout + third.stderr
        assert "is not a seal of the ledger" in third.stderr, third.stderr
        assert snapshot(before_dir) == behind
        assert client.get(keys.CHECKPOINT) == checkpoint
        assert client.get(keys.SEQUENCER) is None
    assert snapshot(ledger_dir) == kept
