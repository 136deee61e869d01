"""Stopping the cluster's daemons (SIGTERM, as `systemctl stop` sends) while Redis is gone: they
ride out an outage while they run (tests/cluster/test_cluster_faults.py), but a daemon asked to stop
must not wait for a Redis that may never come back. Each stops within seconds, exit 0, and the
ledger is left whole."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tests.cluster.harness import Cluster, ledger_lines
from tests.cluster.redis_server import RedisServer
from tests.cluster.test_cluster_faults import gated, start_crawl

TIMEOUT = 60.0  # a failure past this, never a pace


def stopped(process: subprocess.Popen[bytes], what: str, log: str = "") -> int:
    """SIGTERM to `process` alone (its own children are its to stop); its exit status."""
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        problem = f"{what} did not stop within {TIMEOUT:g} s of SIGTERM"
        raise AssertionError(f"{problem}\n{log}") from None


def test_daemons_stop_on_sigterm_while_redis_is_gone(tmp_path: Path) -> None:
    """Mid-run: the worker's crawl holds a fetch (the feed answers only when the gate opens), the
    sequencer's crawl waits for its result, and Redis stops. SIGTERM to each daemon stops it."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    with (
        RedisServer(tmp_path / "redis") as redis_server,
        gated("held.xml") as (server, url, gate),
        Cluster(cluster_dir, redis_server.url) as cluster,
    ):
        cluster.feeds([{"vendor": "held", "url": url}])
        sequencer = cluster.sequencer()
        crawl = start_crawl(cluster)
        worker = cluster.worker("w1")
        assert server.wait_for_request("held.xml", TIMEOUT), cluster.log("w1")
        redis_server.stop()
        try:
            for name, process in (("w1", worker), ("sequencer", sequencer)):
                status = stopped(process, name, cluster.log(name))
                assert status == 0, cluster.log(name)
                assert "Traceback" not in cluster.log(name), cluster.log(name)
        finally:
            gate.set()
            crawl.kill()
            crawl.communicate()
    audit = cluster.run("audit", "--ledger-dir", str(cluster_dir / "ledger"))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert f"audit ok: {len(ledger_lines(cluster_dir / 'ledger'))} leaves" in audit.stdout
