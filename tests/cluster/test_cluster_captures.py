"""A crawl cluster captures pages as it fetches feeds (issue 43, obs 1): workers fetch each page a
capture job names, the sequencer checks what they sent, reads the main text itself and signs the
AX.CAPTURE records (docs/cluster.md, "Page captures").

Real processes on loopback: a redis-server, a sequencer, workers (tests/cluster/harness.py), the
site a FeedServer on 127.0.0.1, and the test as the attacker writing to Redis.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from crovia_spider.cluster import keys
from tests.cluster.harness import Cluster, ledger_lines
from tests.cluster.test_cluster_faults import (
    assert_audit_clean,
    bent,
    finished,
    results_elsewhere,
    run_records,
    start_crawl,
    wait_until,
)
from tests.crawl import run_crawl
from tests.feedserver import FeedServer, Reply
from tests.spider.feedtext import item, rss

pytestmark = pytest.mark.slow
HTML = {"Content-Type": "text/html; charset=utf-8"}
PARAGRAPH = (
    "The model was trained on a larger mixture of public and licensed data than its predecessor,"
    " and it was evaluated on the benchmarks listed in the appendix of this announcement of {}."
)


def page(title: str) -> Reply:
    """An article page, the same bytes at every fetch (so two crawls' bodies compare)."""
    text = "".join(f"<p>{PARAGRAPH.format(title)} Part {n}.</p>" for n in range(4))
    body = (
        f"<!doctype html><html><head><title>{title}</title></head><body><nav><a href='/'>Home"
        f"</a></nav><article><h1>{title}</h1>{text}</article><footer>f</footer></body></html>"
    )
    return Reply(body=body.encode(), headers=HTML)


def serve_site(server: FeedServer, disallowed: bool = False) -> str:
    """A feed of three items: an article, one moved by a 301, one that is not there (404); with
    `disallowed`, a fourth whose page robots.txt disallows."""
    server.script("robots.txt", Reply(body=b"User-agent: *\nDisallow: /private/\n"))
    server.script("private/d", page("Post d"))
    server.script("articles/a", page("Post a"))
    server.script("articles/b", Reply(status=301, headers={"Location": server.url("moved/b")}))
    server.script("moved/b", page("Post b"))
    server.script("articles/c", Reply(status=404, body=b"<html>no</html>", headers=HTML))
    links = [item(f"Post {n}", server.url(f"articles/{n}")) for n in ("a", "b", "c")]
    if disallowed:
        links.append(item("Post d", server.url("private/d")))
    return server.script(
        "feed.xml", Reply(body=rss(*links), headers={"Content-Type": "application/rss+xml"})
    )


def captures_signed(ledger_dir: Path) -> list[tuple]:
    """What a crawl signed of each page, without what differs from crawl to crawl (times, ids,
    request and response heads): sorted by URL."""
    links = {
        e["axiom_id"]: e["body"]["spider_record"]["url"]
        for e in ledger_lines(ledger_dir)
        if e["axiom_type"] == "AX.OBS"
    }
    out = []
    for envelope in ledger_lines(ledger_dir):
        if envelope["axiom_type"] != "AX.CAPTURE":
            continue
        body = envelope["body"]
        out.append(
            (
                body["url"],
                links[body["item"]],
                body["outcome"],
                body.get("status"),
                body.get("final_url", ""),
                json.dumps(body.get("redirects", [])),
                json.dumps(body.get("headers", {}), sort_keys=True),
                body.get("ip_address", ""),
                body.get("body_sha256", ""),
                body.get("body_length"),
                json.dumps(body.get("text"), sort_keys=True),
                body.get("error", ""),
            )
        )
    return sorted(out)


def test_a_cluster_captures_the_pages_of_its_items_as_a_local_crawl_does(
    tmp_path: Path, redis_server
) -> None:
    cluster_dir, local_dir = tmp_path / "cluster", tmp_path / "local"
    cluster_dir.mkdir()
    local_dir.mkdir()
    with FeedServer() as server:
        feeds = [{"vendor": "lab", "url": serve_site(server, disallowed=True), "capture": True}]
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            cluster.worker("w1")
            done = cluster.crawl()
            assert done.returncode == 0, done.stdout + done.stderr + cluster.log("sequencer")
            assert "pages 4 captured (1 first, 1 moved, 2 failed)" in done.stdout, done.stdout
        # Each page fetched once, by the worker (the sequencer's crawl fetches nothing).
        asked = [seen.path for seen in server.requests]
        local = run_crawl(local_dir, feeds)
        assert local.returncode == 0, local.stderr[-3000:]
    ledger_dir = cluster_dir / "ledger"
    signed = captures_signed(ledger_dir)
    assert [(s[0].rsplit("/", 1)[1], s[2]) for s in signed] == [
        ("a", "first"), ("b", "moved"), ("c", "failed"), ("d", "failed"),
    ], signed  # fmt: skip
    assert "robots.txt" in signed[3][11], signed[3]  # refused on the worker, never fetched
    assert "/private/d" not in asked
    text = json.loads(signed[0][10])
    assert text["length"] > 200 and text["extractor"], signed[0]
    assert signed == captures_signed(local_dir / "ledger")
    for name in ("a", "b", "c"):
        assert asked.count(f"/articles/{name}") == 1, asked
    # The main text's bytes are kept beside the ledger, as a local crawl keeps them.
    kept = {p.name for p in (ledger_dir / "bodies").rglob("*") if p.is_file()}
    assert any(text["sha256"] in name for name in kept), sorted(kept)[:5]
    (record,) = run_records(ledger_dir)
    assert record["captures"]["lab"] == {"first": 1, "moved": 1, "failed": 2}, record
    assert_audit_clean(cluster, ledger_dir)


def capture_job(tmp_path: Path, cluster: Cluster, client: Any) -> tuple[str, str, dict]:
    """The feed's job done elsewhere (its genuine result answers it, its job leaves the queue),
    then the run's capture job once the sequencer enqueued it: (request, its id, its fields)."""
    (feed_job,) = wait_until(lambda: client.xrange(keys.JOBS), "the feed's job")
    feed_id = feed_job[0].decode()
    made = results_elsewhere(tmp_path / "feed", cluster, {"lab": (feed_id, feed_job[1])})
    request = orjson.loads(feed_job[1][b"job"])["request"]
    client.xadd(keys.results_key(request), made["lab"])
    client.xdel(keys.JOBS, feed_id)

    def found() -> Any:
        for job_id, fields in client.xrange(keys.JOBS):
            if orjson.loads(fields[b"job"]).get("captures"):
                return request, job_id.decode(), fields
        return None

    return wait_until(found, "the run's capture job")


def test_a_bent_capture_result_is_refused_and_the_genuine_one_signed(
    tmp_path: Path, redis_server
) -> None:
    """Results of the capture job reach the run's stream before the worker's own: a page whose
    body is another page's, a main text the worker chose, a page its job did not name, an error
    chosen for a page that answered. Each is refused, kept in the rejects stream with its reason
    and named in the run record; nothing of it is signed, and the worker's genuine result is."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    ledger_dir = cluster_dir / "ledger"
    client = redis_server.client()
    with FeedServer() as server, Cluster(cluster_dir, redis_server.url) as cluster:
        cluster.feeds([{"vendor": "lab", "url": serve_site(server), "capture": True}])
        cluster.sequencer()
        crawl = start_crawl(cluster)
        request, job_id, fields = capture_job(tmp_path, cluster, client)
        job = orjson.loads(fields[b"job"])
        assert [p["url"].rsplit("/", 1)[1] for p in job["captures"]] == ["a", "b", "c"], job
        genuine = results_elsewhere(tmp_path / "pages", cluster, {"lab": (job_id, fields)})["lab"]
        pages = orjson.loads(genuine[b"result"])["pages"]

        a = {**genuine, b"worker": b"intruder"}  # page a's body field holds page b's bytes
        a[b"body:" + pages[0]["body_sha256"].encode()] = genuine[
            b"body:" + pages[1]["body_sha256"].encode()
        ]

        def chosen_text(result: dict[str, Any]) -> None:
            result["pages"][0]["text"] = "INJECTED main text"

        def not_named(result: dict[str, Any]) -> None:
            result["pages"][2]["url"] = server.url("articles/INJECTED")

        def chosen_error(result: dict[str, Any]) -> None:
            result["pages"][0]["error"] = "no main text: INJECTED"

        bad = [a, *(bent(genuine, f) for f in (chosen_text, not_named, chosen_error))]
        for message in bad:
            client.xadd(keys.results_key(request), message)
        cluster.worker("w1")
        out = finished(cluster, crawl)
        assert "1 feeds (0 failed)" in out, out + cluster.log("sequencer")
    rejects = [
        {k.decode(): v.decode() for k, v in f.items()} for _, f in client.xrange(keys.REJECTS)
    ]
    reasons = [r["reason"] for r in rejects if r["worker"] == "intruder"]
    assert len(reasons) == 4 and all(r["job"] == job_id for r in rejects), rejects
    assert "does not match its digest" in reasons[0]
    assert "not a page's fields" in reasons[1]
    assert "a page its job did not name" in reasons[2]
    assert "an error the worker chose" in reasons[3]
    (record,) = run_records(ledger_dir)
    for reason in reasons:
        assert any("capture result was refused" in p and reason in p for p in record["problems"])
    ledger = b"".join(p.read_bytes() for p in ledger_dir.rglob("*") if p.is_file())
    assert b"INJECTED" not in ledger
    signed = captures_signed(ledger_dir)
    assert [s[2] for s in signed] == ["first", "moved", "failed"], signed
    assert signed[0][8] == pages[0]["body_sha256"]
    assert hashlib.sha256(genuine[b"body:" + signed[0][8].encode()]).hexdigest() == signed[0][8]
    assert record["captures"]["lab"] == {"first": 1, "moved": 1, "failed": 1}, record
    assert_audit_clean(cluster, ledger_dir)


def test_a_worker_captures_only_where_its_own_command_line_allows(
    tmp_path: Path, redis_server
) -> None:
    """A capture job naming a page on an internal host its worker's --allow-private does not
    name: the fetch policy refuses it on the worker, the page gets a failed capture saying so,
    and the internal server gets no request (a job cannot send a worker anywhere)."""
    with (
        FeedServer() as server,
        FeedServer(host="127.0.0.3") as internal,
        Cluster(tmp_path, redis_server.url) as cluster,
    ):
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        internal.script("secret", page("Secret"))
        links = [item("Open", server.url("open")), item("Secret", internal.url("secret"))]
        server.script("open", page("Open"))
        feed = server.script(
            "feed.xml", Reply(body=rss(*links), headers={"Content-Type": "application/rss+xml"})
        )
        cluster.feeds([{"vendor": "lab", "url": feed, "capture": True}])
        cluster.sequencer()
        cluster.worker("w1", allow=("127.0.0.1",))
        done = cluster.crawl()
        assert done.returncode == 0, done.stdout + done.stderr + cluster.log("sequencer")
        assert internal.requests == []
    signed = {s[0]: s for s in captures_signed(tmp_path / "ledger")}
    assert signed[server.url("open")][2] == "first"
    refused = signed[internal.url("secret")]
    assert refused[2] == "failed" and refused[3] is None, refused
    assert "127.0.0.3" in refused[11], refused


def test_a_capture_job_whose_only_result_is_refused_leaves_its_pages_due(
    tmp_path: Path, redis_server
) -> None:
    """A worker takes the capture job and answers it with a result that is refused (published
    and acknowledged in one MULTI, as a worker does): no better answer can come, so the run ends
    without waiting for its timeout, the refusal is named in the run record, nothing of it is
    signed, and the pages stay due for the next run (the record's plan says so)."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    client = redis_server.client()
    with FeedServer() as server, Cluster(cluster_dir, redis_server.url) as cluster:
        cluster.feeds([{"vendor": "lab", "url": serve_site(server), "capture": True}])
        cluster.sequencer()
        crawl = start_crawl(cluster)
        request, job_id, _ = capture_job(tmp_path, cluster, client)
        pages_asked = len(server.requests)
        taken = client.xreadgroup(keys.JOBS_GROUP, "liar", {keys.JOBS: ">"}, count=10)
        assert job_id in [i.decode() for i, _ in taken[0][1]], taken
        lie = {"schema": "crovia.result.v1", "pages": [{"key": "INJECTED"}]}
        pipe = client.pipeline(transaction=True)
        pipe.xadd(keys.results_key(request), {b"job": job_id, b"worker": b"liar",
                                              b"result": orjson.dumps(lie)})  # fmt: skip
        pipe.xack(keys.JOBS, keys.JOBS_GROUP, job_id)
        pipe.xdel(keys.JOBS, job_id)
        pipe.execute()
        out = finished(cluster, crawl)
        assert "1 feeds (0 failed)" in out, out + cluster.log("sequencer")
        assert "pages 0 captured, 3 followed: 0 due later, 3 still due" in out, out
        assert len(server.requests) == pages_asked  # no page fetched by anyone
    (record,) = run_records(cluster_dir / "ledger")
    assert any("capture result was refused" in p for p in record["problems"]), record
    assert not [e for e in ledger_lines(cluster_dir / "ledger") if e["axiom_type"] == "AX.CAPTURE"]


def test_a_sequencer_restarted_mid_captures_takes_its_capture_jobs_up_and_signs_each_once(
    tmp_path: Path, redis_server
) -> None:
    """Two sources with captures; the sequencer signs the first's pages (its capture result
    came), then is SIGKILLed before the second's. A new one takes the run up: the capture jobs
    its run state names (never a second set), reads the results again from the start, signs no
    page twice and the second source's pages once, refuses nothing, and counts all six."""
    cluster_dir = tmp_path / "cluster"
    cluster_dir.mkdir()
    ledger_dir = cluster_dir / "ledger"
    client = redis_server.client()
    batch = ("-s", "CROVIA_ISSUE_BATCH=1")
    with (
        FeedServer() as lab,
        FeedServer(host="127.0.0.2") as press,
        Cluster(cluster_dir, redis_server.url) as cluster,
    ):
        cluster.feeds(
            [
                {"vendor": "lab", "url": serve_site(lab), "capture": True},
                {"vendor": "press", "url": serve_site(press), "capture": True},
            ]
        )
        cluster.sequencer(*batch)
        crawl = start_crawl(cluster)
        feed_jobs = wait_until(
            lambda: len(found := client.xrange(keys.JOBS)) == 2 and found, "jobs"
        )
        by_vendor = {
            orjson.loads(f[b"job"])["feed"]["vendor"]: (i.decode(), f) for i, f in feed_jobs
        }
        request = orjson.loads(feed_jobs[0][1][b"job"])["request"]
        for fields in results_elsewhere(tmp_path / "feeds", cluster, by_vendor).values():
            client.xadd(keys.results_key(request), fields)
        client.xdel(keys.JOBS, *(job_id for job_id, _ in by_vendor.values()))

        def capture_jobs() -> Any:
            found = [(i, f) for i, f in client.xrange(keys.JOBS)]
            return len(found) == 2 and found

        jobs = {
            orjson.loads(f[b"job"])["feed"]["vendor"]: (i.decode(), f)
            for i, f in wait_until(capture_jobs, "the capture jobs")
        }
        made = results_elsewhere(tmp_path / "pages", cluster, jobs)
        client.xadd(keys.results_key(request), made["lab"])
        wait_until(lambda: len(captures_signed(ledger_dir)) == 3, "the lab's pages signed")
        cluster.kill("sequencer")
        assert not run_records(ledger_dir)
        cluster.sequencer(*batch, name="sequencer2")
        wait_until(lambda: "took over the claim" in cluster.log("sequencer2"), "the claim")
        client.xadd(keys.results_key(request), made["press"])
        client.xdel(keys.JOBS, *(job_id for job_id, _ in jobs.values()))
        out = finished(cluster, crawl)
        assert "2 feeds (0 failed)" in out, out + cluster.log("sequencer2")
        assert "pages 6 captured (2 first, 2 moved, 2 failed)" in out, out
    assert client.xlen(keys.REJECTS) == 0, client.xrange(keys.REJECTS)
    assert client.xlen(keys.JOBS) == 0  # no second set of capture jobs
    signed = captures_signed(ledger_dir)
    assert len(signed) == 6 and len({s[0] for s in signed}) == 6, signed
    (record,) = run_records(ledger_dir)
    for vendor in ("lab", "press"):
        assert record["captures"][vendor] == {"first": 1, "moved": 1, "failed": 1}, record
    assert_audit_clean(cluster, ledger_dir)


def test_a_capture_jobs_pages_keep_their_sources_delay(tmp_path: Path, redis_server) -> None:
    """A source with `delay = 2`: the worker's capture crawl holds its host to that delay, as a
    local crawl does (its feed's delay, not DOWNLOAD_DELAY), across the feed's fetch and the
    pages' (politeness on, as a worker runs in production)."""
    with FeedServer(host="127.0.0.2") as server, Cluster(tmp_path, redis_server.url) as cluster:
        cluster.feeds([{"vendor": "lab", "url": serve_site(server), "capture": True, "delay": 2}])
        cluster.sequencer()
        cluster.worker("w1", "-s", "RETRY_BACKOFF_BASE=0", fast=False)
        done = cluster.crawl()
        assert done.returncode == 0, done.stdout + done.stderr + cluster.log("sequencer")
        assert "pages 3 captured" in done.stdout, done.stdout
        pages = sorted(r.at for r in server.requests if r.path.startswith("/articles/"))
    assert len(pages) == 3
    gaps = [later - earlier for earlier, later in itertools.pairwise(pages)]
    assert min(gaps) >= 2.0, gaps
