"""Cluster requests end (issue 43, ghost runs): `crovia crawl --redis` waits a bounded time for a
sequencer and says so, Ctrl-C or SIGTERM withdraws its request, a request older than its deadline
is dropped unrun, a run with no worker gives up and releases the ledger lock, `--redis VENDOR`
reads VENDOR as a vendor, and an unreachable Redis is one line, exit 2."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from crovia_spider.cluster import keys
from crovia_spider.cluster.sequencer import request_crawl, wait_answer
from tests.cluster.harness import Cluster, feeds_on_hosts
from tests.cluster.test_cluster_faults import TIMEOUT, run_records, wait_until
from tests.crawl import PROJECT_ROOT, run_crawl


@contextlib.contextmanager
def cluster_of(tmp_path: Path, redis_server, per_host: int = 1) -> Iterator[Cluster]:
    """A cluster on `redis_server` whose config lists `per_host` fixture feeds of one host."""
    with (
        feeds_on_hosts(hosts=1, per_host=per_host) as (_, feeds),
        Cluster(tmp_path, redis_server.url) as cluster,
    ):
        cluster.feeds(feeds)
        yield cluster


def test_no_sequencer_withdraws_the_request_after_the_wait(tmp_path: Path, redis_server) -> None:
    client = redis_server.client()
    with cluster_of(tmp_path, redis_server) as cluster:
        done = cluster.crawl("--wait", "2", timeout=60)  # bounded: it ends, or the test fails
        assert done.returncode == 2, done.stdout + done.stderr
        assert "no sequencer runs against" in done.stderr
        assert "no sequencer took request" in done.stderr and "withdrawn" in done.stderr
        assert client.xlen(keys.RUNS) == 0
        # A sequencer started later runs nothing of it.
        cluster.sequencer("--once").wait(timeout=TIMEOUT)
    assert run_records(tmp_path / "ledger") == []


def test_sigterm_withdraws_a_waiting_request(tmp_path: Path, redis_server) -> None:
    client = redis_server.client()
    with cluster_of(tmp_path, redis_server) as cluster:
        crawl = subprocess.Popen(
            cluster.command("crawl", "--redis", cluster.url, "--wait", "600"),
            cwd=PROJECT_ROOT, env=cluster.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        wait_until(lambda: client.xlen(keys.RUNS) == 1, "the request")
        crawl.send_signal(signal.SIGTERM)
        out, err = crawl.communicate(timeout=30)
        assert crawl.returncode == 128 + signal.SIGTERM, out + err
        assert "withdrawn, never to run" in err
        assert client.xlen(keys.RUNS) == 0
        cluster.sequencer("--once").wait(timeout=TIMEOUT)
    assert run_records(tmp_path / "ledger") == []


def test_a_request_past_its_deadline_is_dropped_unrun(tmp_path: Path, redis_server) -> None:
    client = redis_server.client()
    with cluster_of(tmp_path, redis_server) as cluster:
        request = request_crawl(client, "vendor_press", deadline=time.time() - 1)
        cluster.sequencer("--once").wait(timeout=TIMEOUT)
        answer = wait_answer(client, request, timeout=10)
    assert answer is not None and answer["exit"] == 2, answer
    assert "not taken before its deadline" in answer["error"]
    assert run_records(tmp_path / "ledger") == []


def test_a_run_with_no_worker_gives_up_and_releases_the_ledger(
    tmp_path: Path, redis_server
) -> None:
    client = redis_server.client()
    with cluster_of(tmp_path, redis_server, per_host=2) as cluster:
        cluster.sequencer("-s", "CROVIA_REDIS_NO_WORKER_SECONDS=3")
        done = cluster.crawl(timeout=120)
        assert "2 feeds (2 failed)" in done.stdout, done.stdout + done.stderr
        (record,) = run_records(tmp_path / "ledger")
        assert any("no worker alive for 3 s" in p for p in record["problems"]), record
        assert client.xlen(keys.JOBS) == 0  # withdrawn: never done for an ended run
        # The ledger is free: a local crawl of the same feeds runs at once.
        local = run_crawl(tmp_path, None, timeout=120)
        assert local.returncode == 0, local.stderr[-2000:]


def test_redis_vendor_reads_the_vendor_when_the_url_is_in_the_environment(
    tmp_path: Path, redis_server
) -> None:
    with cluster_of(tmp_path, redis_server, per_host=2) as cluster:
        cluster.sequencer()
        cluster.worker("w1")
        cluster.env["CROVIA_REDIS_URL"] = cluster.url
        done = cluster.run("crawl", "--redis", "h2_1", timeout=TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 feeds (0 failed)" in done.stdout, done.stdout
    (record,) = run_records(tmp_path / "ledger")
    assert [feed["vendor"] for feed in record["feeds"]] == ["h2_1"]


def test_an_unreachable_redis_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with Cluster(tmp_path, "redis://127.0.0.1:1/0") as cluster:
        for args in (("crawl", "--redis", cluster.url), ("workers", "--redis", cluster.url)):
            done = cluster.run(*args, timeout=60)
            assert done.returncode == 2, done.stdout + done.stderr
            assert "cannot be used" in done.stderr and "retrying" not in done.stderr
            assert "Traceback" not in done.stderr
