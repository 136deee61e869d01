"""Fuzz harness: what a cluster's worker sends the sequencer, and what the sequencer sends workers.

The first byte picks the parser. Even: the rest is a result's JSON, in a results-stream message
beside one body (a fixture feed, under its sha256), through `decode_result` and the sequencer's
`check_result` for a job of that feed (which reads the body again): anything is refused with
ResultRefused, never another error. Odd: the rest is a job's JSON, signed with a fuzz job key,
through `verified_job` (JobRefused, a ValueError) and its settings through `clamp_settings`.
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
        ResultRefused,
        clamp_settings,
        decode_result,
        verified_job,
    )
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
    fields = {b"job": b"1-0", b"worker": b"fuzz", b"result": data[1:]}
    fields[b"body:" + DIGEST.encode()] = BODY
    _, _, result, bodies = decode_result(fields, 1 << 24)
    Sequencer().check_result(FEED, result, bodies)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
