"""`crovia workers`: the live workers with their jobs and last heartbeat, the queue, the sequencer;
as text, JSON and Prometheus metrics (printed, or written for node-exporter's textfile collector).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.cluster.harness import FIXTURES, Cluster
from tests.crawl import PROJECT_ROOT
from tests.feedserver import FeedServer, Reply


def _wait(condition, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def _metrics(text: str) -> dict[str, float]:
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_workers_shows_the_queue_the_workers_and_their_jobs(tmp_path: Path, redis_server) -> None:
    body = (FIXTURES / "openai_news_rss_prefix.xml").read_bytes()
    with FeedServer(FIXTURES, host="127.0.0.2") as server:
        server.script(
            "/slow.xml",
            Reply(body=body, delay=4.0, headers={"Content-Type": "application/rss+xml"}),
        )
        feeds = [{"vendor": "slow", "url": server.url("/slow.xml")}] + [
            {"vendor": f"lab_{n}", "url": server.url(f"openai_news_rss_prefix.xml?n={n}")}
            for n in range(3)
        ]  # fmt: skip
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            crawl = subprocess.Popen(
                cluster.command("crawl", "--redis", cluster.url), cwd=PROJECT_ROOT,
                env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )  # fmt: skip

            def status() -> dict:
                shown = cluster.run("workers", "--redis", cluster.url, "--json")
                assert shown.returncode == 0, shown.stderr
                return json.loads(shown.stdout)

            # No worker yet: four jobs wait, and the metrics say so.
            waiting = _wait(lambda: (s := status())["queue"]["waiting"] == 4 and s)
            assert waiting["workers"] == [] and waiting["sequencer"]["ledger"]
            time.sleep(1.1)  # the oldest job's age is counted in seconds
            metrics_file = tmp_path / "cluster.prom"
            shown = cluster.run("workers", "--redis", cluster.url, "--prometheus",
                                "--metrics-file", str(metrics_file))  # fmt: skip
            printed = _metrics(shown.stdout)
            assert printed == _metrics(metrics_file.read_text())
            assert printed["crovia_cluster_jobs_waiting"] == 4
            assert printed["crovia_cluster_jobs_taken"] == 0
            assert printed["crovia_cluster_workers_alive"] == 0
            assert printed["crovia_cluster_sequencer_up"] == 1
            assert printed["crovia_cluster_crawl_requests_waiting"] == 1
            assert printed["crovia_cluster_oldest_job_age_seconds"] >= 1
            assert printed["crovia_cluster_jobs_redelivered_total"] == 0

            # A worker takes them; while the slow feed is fetched it shows its jobs.
            cluster.worker("w1", "--batch", "1")
            busy = _wait(lambda: [w for w in status()["workers"] if w["jobs"]])
            assert busy[0]["name"] == "w1" and busy[0]["heartbeat"] and busy[0]["pid"]
            text = cluster.run("workers", "--redis", cluster.url).stdout
            assert "sequencer: " in text and "jobs: " in text
            assert "  w1  host " in text and "last heartbeat" in text
            output = crawl.communicate(timeout=120)[0].decode()
            assert crawl.returncode == 0, output
            idle = status()
            assert idle["queue"]["waiting"] == 0 and idle["queue"]["pending"] == 0
            assert [w["jobs"] for w in idle["workers"]] == [""]
    # A worker that stops is gone from the list.
    gone = subprocess.run(
        cluster.command("workers", "--redis", redis_server.url, "--json"),
        cwd=PROJECT_ROOT, env=cluster.env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(gone.stdout)["workers"] == []


def test_without_redis_the_cluster_commands_say_what_to_give(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, "")
    for args in (("workers",), ("worker",), ("sequencer",), ("crawl", "--redis")):
        done = cluster.run(*args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "CROVIA_REDIS_URL" in done.stderr, done.stderr
    unreachable = cluster.run("workers", "--redis", "redis://:secret@127.0.0.1:1/0")
    assert unreachable.returncode == 2
    assert "cannot be used" in unreachable.stderr and "secret" not in unreachable.stderr
