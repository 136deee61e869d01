"""Every way a worker's result can be wrong is refused by the sequencer's checks, with a reason,
before anything is signed (crovia_spider/cluster/jobs.py, crovia_spider/spiders/remote.py); and a
job's encoding reads back to the same job."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from typing import Any

import nacl.signing
import orjson
import pytest

from crovia_spider.cluster.jobs import (
    JOB_SCHEMA,
    Job,
    JobRefused,
    ResultRefused,
    clamp_settings,
    decode_job,
    decode_result,
    encode_result,
    is_allowed,
    parse_allowed,
    verified_job,
)
from crovia_spider.config.feeds import FeedConfig
from tests.cluster.sample_result import sample_result
from tests.fuzz.fuzz_result import BODY, DIGEST, FEED, Sequencer


def _check(result: dict[str, Any], bodies: dict[str, bytes] | None = None) -> Any:
    fields = encode_result("1-0", "w1", result, {DIGEST: BODY} if bodies is None else bodies)
    fields[b"result"] = orjson.dumps(result)  # as given, schema included or not
    _, worker, decoded, found = decode_result(fields, 1 << 24)
    assert worker == "w1"
    return Sequencer().check_result(FEED, decoded, found)


def test_the_sample_result_passes_and_gives_its_items() -> None:
    fetch, outcome, kept, items = _check(sample_result())
    assert fetch.body == BODY and outcome.sha256 == DIGEST and kept["sha256"] == DIGEST
    assert len(items) == fetch.entries["count"] > 0
    assert all(item.body == BODY and item.identity for item in items)


def _set(path: tuple, value: Any) -> Callable[[dict], None]:
    def change(result: dict) -> None:
        target = result
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _drop(path: tuple) -> Callable[[dict], None]:
    def change(result: dict) -> None:
        target = result
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


BACKDATED = "2020-01-01T00:00:00.000000Z"


def _backdate(result: dict) -> None:
    result["fetch"]["fetched_at"] = result["fetch"]["fetch"]["fetched_at"] = BACKDATED
    for item in result["items"]:
        item["observed_at"] = item["fetch"]["fetched_at"] = BACKDATED


READ_AGAIN = "is not what its body gives"
CHANGES = {
    "an int that is a bool": (_set(("outcome", "status"), True), "status is not of the type"),
    "a string for a number": (_set(("outcome", "bytes"), "12"), "bytes is not of the type"),
    "a field it may not have": (_set(("fetch", "signed_by"), "me"), "may not have"),
    "a field missing": (_drop(("fetch", "outcome")), "lacks outcome"),
    "another vendor": (_set(("fetch", "vendor"), "anthropic"), "vendor is not this job's"),
    "another run": (_set(("fetch", "run_hash"), "0" * 64), "run_hash is not this job's"),
    "another relay": (_set(("fetch", "relay"), "someone"), "relay is not this job's"),
    "items counted as issued": (_set(("outcome", "new"), 3), "run line's new " + READ_AGAIN),
    "an item of another run": (
        _set(("items", 0, "parent_run_hash"), "0" * 64),
        "parent_run_hash " + READ_AGAIN,
    ),
    "an item added": (lambda r: r["items"].append(copy.deepcopy(r["items"][0])), "7 sent, 6"),
    "an item removed": (lambda r: r["items"].pop(), "5 sent, 6"),
    "an item's link changed": (
        _set(("items", 0, "link"), "https://openai.com/forged"),
        "link " + READ_AGAIN,
    ),
    "a body it does not carry": (_set(("fetch", "fetch", "body_sha256"), "ab" * 32), "not in it"),
    "items not a list": (_set(("items",), {"0": {}}), "not a list"),
    "a list of text for a dict": (_set(("items", 0, "arxiv"), ["x"]), "arxiv is not of the type"),
    # Issue 42, observation 3: every field a worker could choose before, each refused.
    "a relay's item as the vendor's": (_set(("items", 0, "relay"), "x"), "relay " + READ_AGAIN),
    "another family": (_set(("items", 0, "family"), "openai2"), "family " + READ_AGAIN),
    "a backdated observation": (
        _set(("items", 0, "observed_at"), BACKDATED),
        "observed_at " + READ_AGAIN,
    ),
    "a backdated fetch": (_backdate, "fetch time outside the run"),
    "a fetch from the future": (
        _set(("fetch", "fetched_at"), "2999-01-01T00:00:00.000000Z"),
        "outside the run",
    ),
    "arxiv ids of its own": (
        _set(("items", 0, "arxiv"), {"id": "2401.00001", "version": "v1", "announce_type": "new"}),
        "arxiv " + READ_AGAIN,
    ),
    "a category of its own": (_set(("items", 0, "category"), "x"), "category " + READ_AGAIN),
    "fields said cut": (_set(("items", 0, "cut"), ["title"]), "cut " + READ_AGAIN),
    "a guid of its own": (_set(("items", 0, "guid"), "g"), "guid " + READ_AGAIN),
    "entries the body does not hold": (
        _set(("fetch", "entries", "count"), 1),
        "entries is not what its body and facts give",
    ),
    "a run line that says something else": (
        _set(("outcome", "items_seen"), 99),
        "items_seen " + READ_AGAIN,
    ),
    "a kept note of another body": (_set(("kept", "sha256"), "ab" * 32), "kept-body note"),
    "validators it did not get": (
        _set(("fetch", "fetch", "etag"), '"forged"'),
        "etag",
    ),
    "evidence of another time": (
        _set(("fetch", "fetch", "fetched_at"), "2026-12-03T00:00:02.000000Z"),
        "fetched at another time",
    ),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_wrong_result_is_refused_naming_why(name: str) -> None:
    change, reason = CHANGES[name]
    result = sample_result()
    change(result)
    with pytest.raises(ResultRefused, match=reason):
        _check(result)


def test_a_body_not_matching_its_digest_or_over_the_cap_is_refused() -> None:
    with pytest.raises(ResultRefused, match="does not match its digest"):
        _check(sample_result(), {DIGEST: BODY + b" "})
    fields = encode_result("1-0", "w1", sample_result(), {DIGEST: BODY})
    with pytest.raises(ResultRefused, match="over the cap"):
        decode_result(fields, len(BODY) - 1)
    with pytest.raises(ResultRefused, match=r"a result of .* bytes, over the cap"):
        decode_result(fields, 1 << 24, len(BODY))


def test_a_body_the_record_does_not_cite_or_a_field_of_its_own_is_refused() -> None:
    junk = b"junk" * 1000
    junk_digest = hashlib.sha256(junk).hexdigest()
    with pytest.raises(ResultRefused, match="a body the result does not cite"):
        _check(sample_result(), {DIGEST: BODY, junk_digest: junk})
    fields = encode_result("1-0", "w1", sample_result(), {DIGEST: BODY})
    for name in (b"extra", b"body:" + b"Z" * 64, b"body:abc"):
        with pytest.raises(ResultRefused, match="a field it may not have"):
            decode_result({**fields, name: b"x"}, 1 << 24)


@pytest.mark.parametrize(
    "raw", [b"", b"{", b"[]", b'{"schema": "crovia.result.v0"}', b"\xff\xfe", b"1e999999"]
)
def test_what_is_not_a_result_is_refused(raw: bytes) -> None:
    with pytest.raises(ResultRefused):
        decode_result({b"job": b"1-0", b"result": raw}, 1 << 20)


def test_a_304_must_confirm_the_feed_states_body_and_carry_no_item() -> None:
    sequencer = Sequencer()
    result = sample_result(sequencer)
    entries = result["fetch"]["entries"]
    result["fetch"].update(outcome="not_modified", body_sha256=DIGEST, content_type="")
    del result["fetch"]["fetch"]["body_sha256"]
    result["fetch"]["fetch"]["status"] = 304
    result["items"], result["kept"] = [], None
    result["outcome"].update(status=304, bytes=0, sha256=hashlib.sha256(b"").hexdigest(),
                             not_modified=True, items_seen=0)  # fmt: skip
    fields = encode_result("1-0", "w1", result, {})
    _, _, decoded, bodies = decode_result(fields, 1 << 20)
    with pytest.raises(ResultRefused, match="body_sha256 is not what its body and facts give"):
        sequencer.check_result(FEED, decoded, bodies)
    sequencer.state = {FEED.url: {"validated_body": {"sha256": DIGEST, "entries": entries}}}
    fetch, *_ = sequencer.check_result(FEED, decoded, bodies)
    assert fetch.outcome == "not_modified"
    with_items = {**decoded, "items": sample_result(sequencer)["items"]}
    with pytest.raises(ResultRefused):
        sequencer.check_result(FEED, with_items, {DIGEST: BODY})
    answered_200 = copy.deepcopy(decoded)
    answered_200["fetch"]["fetch"]["status"] = 200
    with pytest.raises(ResultRefused, match="a 304 that is not"):
        sequencer.check_result(FEED, answered_200, bodies)


def test_a_job_reads_back_to_itself_and_a_bad_one_says_why() -> None:
    feed = FeedConfig(vendor="lab", url="https://lab.example/sitemap.xml", kind="sitemap",
                      delay=2.0, include=("/a/",), relay="relay")  # fmt: skip
    job = Job("1-0", "run", "2026-12-03T00:00:00.000000Z", "vendor_press", feed,
              {"etag": '"x"'}, {"CROVIA_MAX_ENTRIES_PER_FEED": "5"})  # fmt: skip
    assert decode_job(job.encode()) == job
    doc = orjson.loads(job.encode())
    for change, reason in (
        ({"schema": "crovia.job.v0"}, "schema"),
        ({"spider": ""}, "without spider"),
        ({"settings": {"CROVIA_LEDGER_DIR": "/"}}, "settings other than"),
        ({"feed": {"vendor": "lab", "url": "file:///etc/passwd"}}, "feed is not valid"),
        ({"feed": {"vendor": "lab", "url": "https://x.example/", "unknown": 1}}, "not valid"),
    ):
        with pytest.raises(ValueError, match=reason):
            decode_job(orjson.dumps({**doc, "schema": JOB_SCHEMA, **change}))
    with pytest.raises(ValueError, match="not JSON"):
        decode_job(b"{")


def test_the_digest_the_sample_cites_is_its_body() -> None:
    assert hashlib.sha256(BODY).hexdigest() == DIGEST


def test_a_jobs_settings_are_held_to_the_workers_own_ceilings() -> None:
    own = {"DOWNLOAD_MAXSIZE": "16777216", "CROVIA_PARSE_SECONDS": "120",
           "CROVIA_PARSE_MEMORY_MB": "512", "CROVIA_SITEMAP_BYTES": "1000",
           "CROVIA_MAX_ENTRIES_PER_FEED": "2000"}  # fmt: skip
    asked = {"DOWNLOAD_MAXSIZE": "0", "CROVIA_PARSE_SECONDS": "99999",
             "CROVIA_PARSE_MEMORY_MB": "-1", "CROVIA_SITEMAP_BYTES": "10",
             "CROVIA_MAX_ENTRIES_PER_FEED": "nan"}  # fmt: skip
    assert clamp_settings(asked, own) == {
        "DOWNLOAD_MAXSIZE": "16777216", "CROVIA_PARSE_SECONDS": "120",
        "CROVIA_PARSE_MEMORY_MB": "512", "CROVIA_SITEMAP_BYTES": "10",
        "CROVIA_MAX_ENTRIES_PER_FEED": "2000",
    }  # fmt: skip
    for value in ("inf", "1e999", "x", "", "-5"):
        assert clamp_settings({"DOWNLOAD_MAXSIZE": value}, own) == {"DOWNLOAD_MAXSIZE": "16777216"}
    assert clamp_settings({"CROVIA_PARSE_SECONDS": "0.5"}, own) == {"CROVIA_PARSE_SECONDS": "0.5"}
    # A worker whose own cap is "none" still never runs a job without one it asked for.
    assert clamp_settings({"DOWNLOAD_MAXSIZE": "100"}, {"DOWNLOAD_MAXSIZE": "0"}) == {
        "DOWNLOAD_MAXSIZE": "100"
    }


def test_only_the_hosts_a_workers_command_line_allows_are_internal_ones_it_may_reach() -> None:
    """Addresses as data only: nothing here connects."""
    allowed = parse_allowed(["127.0.0.2", "[::1]:8080", "Intranet.Example."])
    for url, expected in (
        ("http://127.0.0.2:9/x", True),
        ("https://127.0.0.2/", True),
        ("http://127.0.0.3/", False),
        ("http://[::1]:8080/", True),
        ("http://[::1]:8081/", False),
        ("http://intranet.example/feed", True),
        ("http://10.0.0.1/", False),
        ("http://169.254.169.254/latest/meta-data/", False),
        ("http://[::1:8080/", False),
    ):
        assert is_allowed(url, allowed) is expected, url
    assert parse_allowed("127.0.0.2,localhost:80") == {("127.0.0.2", None), ("localhost", 80)}
    for bad in ("a/b", "user@host", "host:99999", ":80", ""):
        with pytest.raises(ValueError):
            parse_allowed([bad])


def test_a_job_runs_only_signed_by_the_pinned_key_and_unexpired() -> None:
    key, other = nacl.signing.SigningKey(bytes(32)), nacl.signing.SigningKey(bytes([1]) * 32)
    feed = FeedConfig(vendor="lab", url="https://lab.example/feed.xml")
    job = Job("1-0", "run", "2026-12-03T00:00:00.000000Z", "vendor_press", feed, {}, {}, 2000)
    fields = job.signed(key)
    assert verified_job(fields, key.verify_key, now=1999) == job
    for changed, reason in (
        ({b"sig": b""}, "unsigned"),
        (job.signed(other), "not signed by the pinned"),
        ({b"job": fields[b"job"].replace(b"lab.example", b"127.0.0.1")}, "not signed by"),
        ({b"sig": key.sign(fields[b"job"]).signature.hex().encode()}, "not signed by"),
        ({b"sig": b"zz"}, "not signed by"),
    ):
        with pytest.raises(JobRefused, match=reason):
            verified_job({**fields, **changed}, key.verify_key, now=1999)
    with pytest.raises(JobRefused, match="expired"):
        verified_job(fields, key.verify_key, now=2001)
