"""A crawl cluster for tests: a sequencer and workers as real `crovia` processes on one Redis.

    cluster = Cluster(tmp_path, redis_server.url)
    cluster.sequencer(); cluster.worker("w1")
    done = cluster.crawl()                      # `crovia crawl --redis URL`, waited for
    cluster.stop()

Every process runs in a session of its own (so a test can SIGKILL a worker with its crawl child, as
a machine dying would), with the CROVIA_* paths of tests/crawl.py in `tmp_path`. `feeds_on_hosts`
serves fixture feeds from several loopback addresses (127.0.0.2 and up), each a host of its own
for politeness; everything stays on loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ledger.keys.keyfile import generate_signing_key
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, write_feeds
from tests.feedserver import FeedServer

FIXTURES = PROJECT_ROOT / "tests" / "fixtures" / "feeds"
# Feeds of several shapes that every reader takes: RSS 2.0, Atom, RSS 1.0, a JSON Feed.
FEED_FILES = (
    ("openai_news_rss_prefix.xml", "feed"),
    ("huggingface_blog_rss_prefix.xml", "feed"),
    ("mistral_client_python_github_releases_prefix.atom", "feed"),
    ("bair_blog_rss_trim3.xml", "feed"),
    ("lab_jsonfeed_1_1.json", "jsonfeed"),
)
FAST = ("CROVIA_POLITE_DELAYS=0", "DOWNLOAD_DELAY=0", "RETRY_BACKOFF_BASE=0")
# The loopback hosts the tests' feed servers use (127.0.0.1, and 127.0.0.2 up for
# `feeds_on_hosts`): a worker reaches internal addresses only on hosts its command line allows.
TEST_HOSTS = tuple(f"127.0.0.{n}" for n in range(1, 21))


@contextlib.contextmanager
def feeds_on_hosts(hosts: int, per_host: int) -> Iterator[tuple[list[FeedServer], list[dict]]]:
    """`hosts` feed servers (127.0.0.2, .3, ...), each serving the fixture feeds; the feeds.toml
    tables of `per_host` feeds on each (vendor `h<N>_<i>`)."""
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(FeedServer(FIXTURES, host=f"127.0.0.{n + 2}")) for n in range(hosts)
        ]
        feeds = []
        for n, server in enumerate(servers):
            for i in range(per_host):
                name, kind = FEED_FILES[i % len(FEED_FILES)]
                feed = {"vendor": f"h{n + 2}_{i}", "url": server.url(f"{name}?copy={i}")}
                if kind != "feed":
                    feed["kind"] = kind
                feeds.append(feed)
        yield servers, feeds


class Cluster:
    """The processes of one cluster (a sequencer, workers) and the commands a user would type."""

    def __init__(self, tmp_path: Path, redis_url: str, **env: str) -> None:
        self.tmp_path = tmp_path
        self.url = redis_url
        self.job_key = tmp_path / "keys" / "jobs.key"
        if not self.job_key.exists():  # the sequencer would make it; workers pin it first
            public = bytes(generate_signing_key(self.job_key).verify_key).hex()
            self.job_key.with_name("jobs.key.pub").write_text(public + "\n")
        self.job_pub = self.job_key.with_name("jobs.key.pub")
        env = {"CROVIA_JOB_KEY_FILE": str(self.job_key), **env}
        self.env = crawl_env(tmp_path, **env)
        self.env.pop("CROVIA_REDIS_URL", None)
        self.env.pop("CROVIA_SEQUENCER_KEY", None)
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}

    def feeds(self, feeds: list[dict[str, Any]]) -> None:
        write_feeds(self.tmp_path / "feeds.toml", feeds)

    def command(self, *args: str) -> list[str]:
        return [str(BIN / "python"), "-m", "crovia_spider", *args]

    def start(
        self, name: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log = self.tmp_path / f"{name}.log"
        self.logs[name] = log
        with log.open("ab") as out:  # the child has its own copy of the descriptor
            process = subprocess.Popen(
                self.command(*args),
                cwd=PROJECT_ROOT,
                env=env or self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes[name] = process
        return process

    def sequencer(self, *extra: str, name: str = "sequencer") -> subprocess.Popen[bytes]:
        settings = [arg for pair in FAST for arg in ("-s", pair)]
        return self.start(name, "sequencer", "--redis", self.url, *settings, *extra)

    def worker(
        self,
        name: str,
        *extra: str,
        fast: bool = True,
        env: dict[str, str] | None = None,
        allow: tuple[str, ...] = TEST_HOSTS,
    ) -> subprocess.Popen[bytes]:
        """A worker pinning the cluster's job key and allowed the test hosts (`allow`); `env`
        replaces the cluster's environment (a machine of its own)."""
        settings = [arg for pair in FAST for arg in ("-s", pair)] if fast else []
        allowed = [arg for host in allow for arg in ("--allow-private", host)]
        return self.start(
            name, "worker", "--redis", self.url, "--name", name, "--heartbeat", "1",
            "--sequencer-key", str(self.job_pub), *allowed, *settings, *extra, env=env,
        )  # fmt: skip

    def crawl(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command("crawl", "--redis", self.url, *args),
            cwd=PROJECT_ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args),
            cwd=PROJECT_ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def kill(self, name: str) -> None:
        """SIGKILL the process and its process group: a machine dying. (A worker's crawl child,
        in a session of its own, dies with its parent: crovia_spider/cluster/worker.py.)"""
        process = self.processes[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace") if name in self.logs else ""

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        for name, process in self.processes.items():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill(name)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ledger_lines(ledger_dir: Path) -> list[dict[str, Any]]:
    path = ledger_dir / "axiom_ledger.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def what_was_recorded(ledger_dir: Path) -> tuple[list[tuple], list[tuple]]:
    """What a crawl put in a ledger, without what differs from crawl to crawl (times, run ids,
    signatures): the items (vendor, target, fingerprint, title), and the fetch records (vendor,
    feed URL, outcome, body digest, entries), each sorted."""
    items, fetches = [], []
    for envelope in ledger_lines(ledger_dir):
        body = envelope["body"]
        if envelope.get("axiom_type") == "AX.FETCH":
            fetches.append(
                (
                    body["vendor"],
                    body["feed_url"],
                    body["outcome"],
                    body.get("body_sha256", ""),
                    json.dumps(body.get("entries"), sort_keys=True),
                )
            )
        elif envelope.get("axiom_type") == "AX.OBS":
            record = body["spider_record"]
            items.append(
                (
                    record["vendor"],
                    envelope["subject"]["target_id"],
                    record["fingerprint"],
                    body.get("title", ""),
                )
            )
    return sorted(items), sorted(fetches)
