"""Fuzz harness: what a cluster's worker sends the sequencer, and what the sequencer sends workers.

The first byte picks the parser. Even and below 0xC0: the rest is a result's JSON, in a
results-stream message beside one body (a fixture feed, under its sha256), through `decode_result`
and the sequencer's `check_result` for a job of that feed (which reads the body again): anything
is refused with ResultRefused, never another error. Even from 0xC0: the rest is a capture job's
result (its pages' facts) beside one body (a captured page) and one response head, through
`decode_result` and `capture_pages` (crovia_spider/spiders/verdict.py) for a job of two pages.
Odd: the rest is a job's JSON, signed with a fuzz job key, through `verified_job` (JobRefused, a
ValueError) and its settings through `clamp_settings`.
(crovia_spider/cluster/jobs.py, crovia_spider/spiders/remote.py.)
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    import nacl.signing

    from crovia_spider.cluster.jobs import (
        JOB_SETTINGS,
        JOB_SIGNED_PREFIX,
        Job,
        ResultRefused,
        clamp_settings,
        decode_result,
        verified_job,
    )
    from crovia_spider.config.feeds import FeedConfig
    from crovia_spider.feed.kinds import read_body
    from crovia_spider.runs.runlog import RunLog
    from crovia_spider.spiders.vendor_press import VendorPressSpider
    from crovia_spider.spiders.verdict import capture_pages

BODY = (
    Path(__file__).resolve().parents[1] / "fixtures" / "feeds" / "openai_news_rss_prefix.xml"
).read_bytes()
DIGEST = hashlib.sha256(BODY).hexdigest()
FEED = FeedConfig(vendor="openai", url="https://openai.com/news/rss.xml")
RUN = ("vendor_press_20261203T000000Z_00000000", "2026-12-03T00:00:00.000000Z")
DOCUMENTED = (ResultRefused, ValueError)
SLACK = 4 << 20  # the body and its digest checked once per input
# JSON's objects in Python, and every field copied once into the dataclasses it fills.
AMPLIFICATION = 60


class Sequencer(VendorPressSpider):
    """The sequencer's side of a run, as much as `check_result` reads of it: the project's
    spider, its run and feed state, reading bodies in-process (`read_body`)."""

    def __init__(self) -> None:
        super().__init__()
        self.feeds = [FEED]
        self.run = RunLog(self.name, [(FEED.vendor, FEED.url)], *RUN)
        self.body_reader = read_body


# A capture job of two pages of FEED's source, the page body and response head a result carries.
PAGES = tuple(
    {"key": f"openai:{n}", "item": f"axm_{n * 64}", "url": f"https://openai.com/index/{n}/",
     "vendor": FEED.vendor, "spider": "vendor_press"}
    for n in ("1", "2")
)  # fmt: skip
CAPTURE_JOB = Job("1-0", *RUN, "vendor_press", FEED, {}, {}, 2**40, PAGES)
PAGE = b"<!doctype html><html><body><article><h1>T</h1><p>" + b"Words. " * 60 + b"</p></article>"
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
CAPTURE_FROM = 0xC0


class CaptureSequencer(Sequencer):
    """The sequencer's side as `capture_pages` reads it: its run, its capture cap."""

    def __init__(self) -> None:
        super().__init__()
        self.capture_max_bytes = 1 << 20


JOB_KEY = nacl.signing.SigningKey(bytes(32))
OWN = dict.fromkeys(JOB_SETTINGS, "100")


def target(data: bytes) -> None:
    if not data:
        return
    if data[0] % 2:
        raw = data[1:]
        signature = JOB_KEY.sign(JOB_SIGNED_PREFIX + raw).signature.hex().encode()
        job = verified_job({b"job": raw, b"sig": signature}, JOB_KEY.verify_key, now=0)
        clamp_settings(job.settings, OWN)
        return
    if data[0] >= CAPTURE_FROM:
        fields = {b"job": b"1-0", b"worker": b"fuzz", b"result": data[1:]}
        for blob in (PAGE, HEAD):
            fields[b"body:" + hashlib.sha256(blob).hexdigest().encode()] = blob
        _, _, result, bodies = decode_result(fields, 1 << 24)
        capture_pages(CaptureSequencer(), CAPTURE_JOB, result, bodies)
        return
    fields = {b"job": b"1-0", b"worker": b"fuzz", b"result": data[1:]}
    fields[b"body:" + DIGEST.encode()] = BODY
    _, _, result, bodies = decode_result(fields, 1 << 24)
    Sequencer().check_result(FEED, result, bodies)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
