"""Nothing from Redis becomes a signed statement the sequencer cannot check (issue 42): each attack
of a hostile Redis writer, made with real processes on loopback (redis-server, a sequencer,
workers, and the test as the attacker writing to Redis), and what the cluster does instead."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import nacl.signing
import orjson
import pytest

from crovia_spider.cluster import keys
from crovia_spider.cluster.jobs import Job
from crovia_spider.cluster.sequencer import wait_answer
from crovia_spider.config.feeds import FeedConfig
from tests.cluster.harness import Cluster, feeds_on_hosts, ledger_lines
from tests.cluster.test_cluster_faults import (
    TIMEOUT,
    assert_as_local_crawl,
    assert_audit_clean,
    bent,
    finished,
    jobs_of_the_run,
    results_elsewhere,
    run_records,
    start_crawl,
    wait_until,
)
from tests.feedserver import FeedServer, Reply

RSS = "application/rss+xml"


def rss(host: str, *slugs: str) -> bytes:
    items = "".join(
        f"<item><title>{slug}</title><link>http://{host}/{slug}</link><guid>{slug}</guid></item>"
        for slug in slugs
    )
    channel = f"<channel><title>t</title>{items}</channel>"
    return f'<?xml version="1.0"?><rss version="2.0">{channel}</rss>'.encode()


# -- 1. a job anyone wrote sends no worker anywhere ----------------------------------------------


def _job_fields(url: str, key: nacl.signing.SigningKey | None) -> dict[bytes, bytes]:
    feed = FeedConfig(vendor="victim", url=url)
    job = Job("1-0", "run", "2026-12-05T00:00:00.000000Z", "vendor_press", feed, {},
              {"DOWNLOAD_MAXSIZE": "0"}, int(time.time()) + 3600)  # fmt: skip
    return job.signed(key) if key is not None else {b"job": job.encode()}


def test_a_job_the_sequencer_did_not_sign_is_refused_and_fetches_nothing(
    tmp_path: Path, redis_server
) -> None:
    """An unsigned job and one signed by another key, both naming an internal server, XADDed by
    the attacker: the worker refuses each, says so once, acknowledges neither, and the internal
    server gets no request."""
    client = redis_server.client()
    with FeedServer(tmp_path, host="127.0.0.2") as internal:
        (tmp_path / "latest").write_bytes(rss("127.0.0.2", "secret"))
        url = internal.url("latest")
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.worker("w1", "--job-timeout", "1")
            wait_until(lambda: client.exists(keys.worker_key("w1")), "the worker")
            unsigned = client.xadd(keys.JOBS, _job_fields(url, None))
            foreign = client.xadd(keys.JOBS, _job_fields(url, nacl.signing.SigningKey.generate()))
            wait_until(lambda: cluster.log("w1").count("refused job") >= 2, "the refusals")
            time.sleep(3)  # past the job timeout: the worker takes them over, and refuses again
            log = cluster.log("w1")
            # Neither acknowledged: both still in the stream, pending with the worker.
            assert client.xlen(keys.JOBS) == 2
            assert client.xpending(keys.JOBS, keys.JOBS_GROUP)["pending"] == 2
        assert not internal.requests, internal.requests
        for job_id, why in ((unsigned, "an unsigned job"), (foreign, "not signed by the pinned")):
            lines = [line for line in log.splitlines() if job_id.decode() in line]
            assert len(lines) == 1 and why in lines[0], log


def test_a_worker_refuses_internal_addresses_its_command_line_does_not_allow(
    tmp_path: Path, redis_server
) -> None:
    """A feed of the sequencer's own config on an internal address: a worker whose command line
    does not allow that host fetches nothing from it, not even its robots.txt, and the run
    records the refusal; the worker that allows it fetches it."""
    with feeds_on_hosts(hosts=1, per_host=1) as (servers, feeds):
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            cluster.worker("w1", allow=("127.0.0.1",))
            done = cluster.crawl()
        assert not servers[0].requests, servers[0].requests
        assert "1 feeds (1 failed)" in done.stdout, done.stdout
        (record,) = run_records(tmp_path / "ledger")
        assert "127.0.0.2 is a loopback address" in record["feeds"][0]["error"], record


def test_a_worker_without_a_pinned_sequencer_key_refuses_to_start(
    tmp_path: Path, redis_server
) -> None:
    """`crovia worker` without --sequencer-key runs no job: exit 2, saying what to give."""
    with Cluster(tmp_path, redis_server.url) as cluster:
        done = cluster.run("worker", "--redis", cluster.url, "--idle-exit", "1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--sequencer-key" in done.stderr, done.stderr


# -- 2 and 5. a run the sequencer did not start ----------------------------------------------------


FOREIGN = {
    "an earlier run": None,  # filled with the first run's id and start
    "a backdated run of junk": {
        "run_id": "vendor_press_20200101T000000Z_deadbeef",
        "started_at": "2020-01-01T00:00:00.000000Z",
        "spider": "vendor_press",
        "ledger_bytes": "not a number",
        "jobs": '{"1-0": "nobody"}',
    },
}


@pytest.mark.parametrize("how", list(FOREIGN))
def test_a_run_hash_the_sequencer_did_not_create_is_refused_and_named(
    tmp_path: Path, redis_server, how: str
) -> None:
    """The attacker posts a crawl request and, in the same MULTI, its run hash: an earlier run's
    id and start with `ledger_bytes = 0` (which made the sequencer sign a new item with no fetch
    record, and `crovia absent` answer absent, exit 0), or a backdated junk one (which crashed
    it). The sequencer refuses the hash, names it in the run record, runs the request as a run of
    its own, and the new item has its fetch record: `absent` never exits 0 for it."""
    client = redis_server.client()
    host = "127.0.0.2"
    with FeedServer(tmp_path, host=host) as server:
        url = server.script("feed.xml", Reply(200, rss(host, "old"), {"Content-Type": RSS}),
                            Reply(200, rss(host, "old", "new"), {"Content-Type": RSS}))  # fmt: skip
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds([{"vendor": "lab", "url": url}])
            cluster.sequencer()
            cluster.worker("w1")
            first = cluster.crawl()
            assert first.returncode == 0, first.stdout + first.stderr
            (earlier,) = run_records(tmp_path / "ledger")
            foreign = FOREIGN[how] or {
                "run_id": earlier["run_id"],
                "started_at": earlier["started_at"],
                "spider": "vendor_press",
                "ledger_bytes": "0",
            }
            request = f"{int(time.time() * 1000) + 5000}-0"
            body = {"spider": "vendor_press", "vendor": "", "skip": ""}
            pipe = client.pipeline(transaction=True)
            pipe.xadd(keys.RUNS, {"request": json.dumps(body)}, id=request)
            pipe.hset(keys.run_key(request), mapping=foreign)
            pipe.execute()
            answer = wait_answer(client, request, TIMEOUT)
            assert answer is not None and answer["exit"] == 0, (answer, cluster.log("sequencer"))
            absent = cluster.run("absent", "--url", f"http://{host}/new", "--at",
                                 "2030-01-01T00:00:00Z")  # fmt: skip
    (_, record) = run_records(tmp_path / "ledger")
    assert record["run_id"] not in (earlier["run_id"], foreign["run_id"])
    assert record["started_at"] > earlier["started_at"]
    assert any("did not create was refused" in p and foreign["run_id"] in p
               for p in record["problems"]), record["problems"]  # fmt: skip
    assert "did not create was refused" in cluster.log("sequencer")
    lines = ledger_lines(tmp_path / "ledger")
    fetches = [e for e in lines if e.get("axiom_type") == "AX.FETCH"]
    assert len(fetches) == 2 and fetches[1]["body"]["run"] == record["parent_run_hash"]
    new = [e for e in lines if e.get("axiom_type") == "AX.OBS"
           and e["body"]["spider_record"].get("url", "").endswith("/new")]  # fmt: skip
    runs = {e["body"]["spider_record"]["parent_run_hash"] for e in new}
    assert runs == {record["parent_run_hash"]}
    assert absent.returncode != 0, absent.stdout + absent.stderr


# -- 3. signed fields a worker chose ---------------------------------------------------------------


def _relay_emptied(result: dict[str, Any]) -> None:
    for item in result["items"]:
        item["relay"] = ""


def _family(result: dict[str, Any]) -> None:
    for item in result["items"]:
        item["family"] = "openai"


def _backdated(result: dict[str, Any]) -> None:
    stamp = "2020-01-01T00:00:00.000000Z"
    result["fetch"]["fetched_at"] = result["fetch"]["fetch"]["fetched_at"] = stamp
    for item in result["items"]:
        item["observed_at"] = item["fetch"]["fetched_at"] = stamp


def _category(result: dict[str, Any]) -> None:
    for item in result["items"]:
        item["category"] = "INJECTED"


BENDS = {
    "h2_0": (_relay_emptied, "relay is not what its body gives"),
    "h2_1": (_family, "family is not what its body gives"),
    "h2_2": (_backdated, "fetch time outside the run"),
    "h2_3": (_category, "category is not what its body gives"),
}


def test_signed_fields_a_worker_chose_are_refused_and_the_ledger_is_a_local_crawls(
    tmp_path: Path, redis_server
) -> None:
    """Results bent as a hostile worker would (a relay's items as the vendor's, another family,
    a backdated fetch, a category of its own) reach the run's stream before the worker's own:
    each is refused naming the field, and every signed value is a local crawl's."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    ledger_dir = cluster_dir / "ledger"
    client = redis_server.client()
    with feeds_on_hosts(hosts=1, per_host=4) as (_, feeds):
        feeds[0]["relay"] = "mirror"
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            crawl = start_crawl(cluster)
            jobs = jobs_of_the_run(client, len(feeds))
            genuine = results_elsewhere(tmp_path, cluster, jobs)
            request = orjson.loads(jobs["h2_0"][1][b"job"])["request"]
            for vendor, (change, _) in BENDS.items():
                client.xadd(keys.results_key(request), bent(genuine[vendor], change))
            cluster.worker("w1")
            out = finished(cluster, crawl)
            assert f"{len(feeds)} feeds (0 failed)" in out, out
        rejects = [
            {k.decode(): v.decode() for k, v in fields.items()}
            for _, fields in client.xrange(keys.REJECTS)
        ]
        vendor_of = {job_id: vendor for vendor, (job_id, _) in jobs.items()}
        reasons = {vendor_of[r["job"]]: r["reason"] for r in rejects}
        for vendor, (_, reason) in BENDS.items():
            assert reason in reasons[vendor], reasons
        ledger = (ledger_dir / "axiom_ledger.jsonl").read_bytes()
        assert b"INJECTED" not in ledger and b"2020-01-01" not in ledger
        relayed = [e for e in ledger_lines(ledger_dir) if e["body"].get("vendor") == "h2_0"
                   or e["body"].get("spider_record", {}).get("vendor") == "h2_0"]  # fmt: skip
        assert relayed and all(e["body"].get("relay") == "mirror" for e in relayed)
        assert_as_local_crawl(tmp_path, feeds, ledger_dir)
    assert_audit_clean(cluster, ledger_dir)


# -- 4. results without end ------------------------------------------------------------------------


JUNK_RESULTS = 100
JUNK_BYTES = 6 << 20
RESULT_CAP = 1 << 20
# The sequencer's crawl holds at most one read of results (one result's cap) beside what it
# holds anyway; without the bound one XREAD of 50 junk results alone held 300 MiB.
PEAK_BOUND = 320 << 20


def _peak_rss_of_children(parent: int, stop: threading.Event, peaks: dict[int, int]) -> None:
    """Sample the peak RSS (VmHWM) of `parent`'s children until `stop` is set."""
    while not stop.wait(0.05):
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if fields.get("PPid", "").strip() == str(parent) and "VmHWM" in fields:
                kib = int(fields["VmHWM"].split()[0])
                peaks[int(pid)] = max(peaks.get(int(pid), 0), kib << 10)


def test_oversized_results_are_refused_unread_and_the_run_finishes(
    tmp_path: Path, redis_server
) -> None:
    """100 results of 6 MiB each, over the result cap, reach the run's stream before the
    worker's: the sequencer refuses each without reading it, its crawl's peak memory stays
    under the bound, and the run finishes with the worker's results signed."""
    client = redis_server.client()
    junk = os.urandom(JUNK_BYTES)
    name = b"body:" + hashlib.sha256(junk).hexdigest().encode()
    with feeds_on_hosts(hosts=1, per_host=2) as (_, feeds):
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds(feeds)
            sequencer = cluster.sequencer("-s", f"CROVIA_REDIS_RESULT_BYTES={RESULT_CAP}")
            crawl = start_crawl(cluster)
            jobs = jobs_of_the_run(client, len(feeds))
            request = orjson.loads(next(iter(jobs.values()))[1][b"job"])["request"]
            job_ids = [job_id.encode() for job_id, _ in jobs.values()]
            stop, peaks = threading.Event(), {}
            sampler = threading.Thread(target=_peak_rss_of_children,
                                       args=(sequencer.pid, stop, peaks))  # fmt: skip
            sampler.start()
            try:
                for n in range(JUNK_RESULTS):
                    client.xadd(keys.results_key(request), {
                        b"job": job_ids[n % len(job_ids)], b"worker": b"flood",
                        b"result": b'{"schema": "crovia.result.v1"}', name: junk,
                    })  # fmt: skip
                cluster.worker("w1")
                out = finished(cluster, crawl)
            finally:
                stop.set()
                sampler.join()
        assert f"{len(feeds)} feeds (0 failed)" in out, out
        print(f"sequencer's children, peak RSS: {max(peaks.values()) / (1 << 20):.0f} MiB")
        assert peaks and max(peaks.values()) < PEAK_BOUND, {p: v >> 20 for p, v in peaks.items()}
        (record,) = run_records(tmp_path / "ledger")
        assert any("over the cap" in p and "not read" in p for p in record["problems"])
