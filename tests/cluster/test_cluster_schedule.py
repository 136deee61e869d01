"""`crovia schedule --redis`: its crawl jobs go to the cluster's sequencer, as `crovia crawl
--redis` does, and only the arguments that choose feeds travel."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.children import cluster_command
from crovia_spider.schedule.config import Job
from crovia_spider.schedule.triggers import interval_trigger, parse_duration
from tests.cluster.harness import Cluster, feeds_on_hosts
from tests.crawl import PROJECT_ROOT

_URL = "CROVIA_REDIS_URL"


def _job(*args: str) -> Job:
    trigger = interval_trigger(parse_duration("1h"))
    return Job(name="hourly", trigger=trigger, when="every 1h", spider="vendor_press", args=args)


def test_a_crawl_job_becomes_a_crawl_on_the_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    # cluster_command puts the URL in this process's environment for the children: taken out
    # after the test, or every later crawl of this test worker would read it.
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k != _URL})
    argv = cluster_command(_job("-a", "vendor=openai,arxiv_*", "-a", "skip=arxiv_cs_lg"), "r://")
    assert os.environ[_URL] == "r://"  # for the children, in the copy monkeypatch takes back
    assert argv[3:] == [
        "crawl", "--redis", "--spider", "vendor_press", "openai", "arxiv_*",
        "--skip", "arxiv_cs_lg",
    ]  # fmt: skip
    assert "r://" not in argv  # the URL travels in the environment, never in `ps`


@pytest.mark.parametrize(
    "args", [("-s", "CROVIA_MAX_ENTRIES_PER_FEED=5"), ("-a", "other=1"), ("-a",)]
)
def test_settings_do_not_travel_to_a_cluster(args: tuple[str, ...]) -> None:
    with pytest.raises(ConfigError, match="does not travel to a cluster"):
        cluster_command(_job(*args), "redis://127.0.0.1:1/0")


def test_the_scheduler_crawls_on_the_cluster(tmp_path: Path, redis_server) -> None:
    schedule = tmp_path / "schedule.toml"
    schedule.write_text('[[jobs]]\nname = "often"\nspider = "vendor_press"\nevery = "2s"\n')
    with (
        feeds_on_hosts(hosts=1, per_host=2) as (_, feeds),
        Cluster(tmp_path, redis_server.url) as cluster,
    ):
        cluster.feeds(feeds)
        cluster.sequencer()
        cluster.worker("w1")
        runs = tmp_path / "ledger" / "runs.jsonl"
        scheduler = subprocess.Popen(
            cluster.command("schedule", "--config", str(schedule), "--redis", cluster.url),
            cwd=PROJECT_ROOT, env=cluster.env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and scheduler.poll() is None:
                if runs.exists() and runs.read_text().count("\n") >= 1:
                    break
                time.sleep(0.2)
        finally:
            scheduler.send_signal(signal.SIGTERM)
            output = scheduler.communicate(timeout=60)[0].decode()
    records = [json.loads(line) for line in runs.read_text().splitlines()]
    assert records and records[0]["outcome"] == "finished", output
    assert {feed["vendor"] for feed in records[0]["feeds"]} == {"h2_0", "h2_1"}
    assert all(feed["status"] == 200 for feed in records[0]["feeds"])
