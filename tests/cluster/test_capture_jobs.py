"""A capture job as it travels (crovia_spider/cluster/jobs.py): its pages are signed with the job,
read back the same, and a worker refuses pages that are not its source's, not http(s), named
twice or too many. A feed job's JSON is unchanged by the `captures` field (older workers read it).
"""

from __future__ import annotations

import time
from typing import Any

import nacl.signing
import orjson
import pytest

from crovia_spider.cluster.jobs import (
    CAPTURE_PAGES_MAX,
    JOB_SIGNED_PREFIX,
    Job,
    JobRefused,
    clamp_settings,
    verified_job,
)
from crovia_spider.config.feeds import FeedConfig

KEY = nacl.signing.SigningKey(bytes(range(32)))
FEED = FeedConfig(vendor="lab", url="http://127.0.0.1:8000/feed.xml", capture=True)


def page(n: int, **changed: str) -> dict[str, str]:
    found = {"key": f"lab:{n}", "item": f"axm_{n:064d}", "url": f"http://127.0.0.1:8000/a/{n}",
             "vendor": "lab", "spider": "vendor_press"}  # fmt: skip
    return {**found, **changed}


def job(pages: Any) -> Job:
    return Job("1-0", "run", "2026-12-05T00:00:00.000000Z", "vendor_press", FEED, {}, {},
               int(time.time()) + 600, pages)  # fmt: skip


def resigned(doc: dict[str, Any]) -> dict[bytes, bytes]:
    raw = orjson.dumps(doc)
    return {b"job": raw, b"sig": KEY.sign(JOB_SIGNED_PREFIX + raw).signature.hex().encode()}


def test_a_capture_job_reads_back_its_pages_and_a_feed_job_has_no_captures_key() -> None:
    pages = (page(1), page(2))
    back = verified_job(job(pages).signed(KEY), KEY.verify_key)
    assert back.captures == pages and back.feed == FEED
    assert b"captures" not in job(()).encode()
    assert verified_job(job(()).signed(KEY), KEY.verify_key).captures == ()


@pytest.mark.parametrize(
    ("pages", "said"),
    [
        ([page(1, vendor="other")], "a capture of another source"),
        ([page(1, spider="arxiv")], "a capture of another source"),
        ([page(1, url="file:///etc/passwd")], "no http(s) URL"),
        ([page(1), page(1)], "naming a page twice"),
        ([{**page(1), "text": "mine"}], "not a page"),
        ([page(1, item="")], "not a page"),
        ([page(n) for n in range(CAPTURE_PAGES_MAX + 1)], "at most"),
        ({"key": "x"}, "not a list"),
    ],
)
def test_a_worker_refuses_a_capture_job_whose_pages_are_not_its_sources(pages, said) -> None:
    doc = orjson.loads(job(()).encode())
    doc["captures"] = pages
    with pytest.raises(JobRefused, match=said.replace("(", r"\(").replace(")", r"\)")):
        verified_job(resigned(doc), KEY.verify_key)


def test_a_capture_jobs_size_cap_is_held_to_the_workers_and_never_lifted() -> None:
    own = {"CROVIA_CAPTURE_MAX_BYTES": "1000"}
    assert clamp_settings({"CROVIA_CAPTURE_MAX_BYTES": "0"}, own) == own  # 0: no cap, refused
    assert clamp_settings({"CROVIA_CAPTURE_MAX_BYTES": "99999"}, own) == own
    assert clamp_settings({"CROVIA_CAPTURE_MAX_BYTES": "10"}, own) == {
        "CROVIA_CAPTURE_MAX_BYTES": "10"
    }
