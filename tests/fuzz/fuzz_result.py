"""Fuzz harness: what a cluster's worker sends the sequencer, and what the sequencer sends workers.

The first byte picks the parser. Even: the rest is a result's JSON, in a results-stream message
beside one body (a fixture feed, under its sha256), through `decode_result` and the sequencer's
`check_result` for a job of that feed: anything is refused with ResultRefused, never another
error. Odd: the rest is a job's JSON through `decode_job`, which raises only ValueError.
(crovia_spider/cluster/jobs.py, crovia_spider/spiders/remote.py.)
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.cluster.jobs import ResultRefused, decode_job, decode_result
    from crovia_spider.config.feeds import FeedConfig
    from crovia_spider.feed.kinds import read_body
    from crovia_spider.runs.runlog import RunLog
    from crovia_spider.spiders.vendor_press import VendorPressSpider

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


def target(data: bytes) -> None:
    if not data:
        return
    if data[0] % 2:
        decode_job(data[1:])
        return
    fields = {b"job": b"1-0", b"worker": b"fuzz", b"result": data[1:]}
    fields[b"body:" + DIGEST.encode()] = BODY
    _, _, result, bodies = decode_result(fields, 1 << 24)
    Sequencer().check_result(FEED, result, bodies)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
