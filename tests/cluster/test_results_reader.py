"""The sequencer's reader of a run's results stream (crovia_spider/cluster/results.py), built as
the sequencer builds it from its settings (crovia_spider/spiders/remote.py, `results_reader`), on
a real redis-server: a result is refused unread only over CROVIA_REDIS_RESULT_BYTES (never over
a body's cap, DOWNLOAD_MAXSIZE, which each body is held to once read), and one read hands over a
bounded number of messages."""

from __future__ import annotations

import os

from scrapy.settings import Settings

from crovia_spider.spiders.remote import results_reader

STREAM = "crovia:results:1-0"
MIB = 1 << 20


def settings(**values: int) -> Settings:
    out = Settings()
    out.setmodule("crovia_spider.settings", priority="project")
    out.setdict(values, priority="cmdline")
    return out


def test_a_result_over_the_body_cap_but_under_the_result_cap_is_handed_over(redis_server) -> None:
    client = redis_server.client()
    reader = results_reader(
        client, settings(DOWNLOAD_MAXSIZE=MIB, CROVIA_REDIS_RESULT_BYTES=4 * MIB)
    )
    # A sitemap walk's result: two bodies, each under DOWNLOAD_MAXSIZE, together over it.
    walk = {b"job": b"1-1", b"body:a": os.urandom(MIB - 1024), b"body:b": os.urandom(MIB - 1024)}
    over = {b"job": b"1-2", b"body:c": os.urandom(5 * MIB)}
    first, second = client.xadd(STREAM, walk), client.xadd(STREAM, over)
    handed, refused = reader.read(STREAM, "0-0")
    assert handed.id == first.decode() and handed.fields == walk
    assert refused.id == second.decode() and refused.fields is None
    assert refused.job == "1-2" and refused.size > 5 * MIB


def test_one_read_hands_over_a_bounded_number_of_messages(redis_server) -> None:
    client = redis_server.client()
    reader = results_reader(client, settings())
    for n in range(120):
        client.xadd(STREAM, {b"job": f"1-{n}".encode()})
    found = reader.read(STREAM, "0-0")
    assert 0 < len(found) < 120, len(found)
    assert [m.fields[b"job"] for m in found] == [f"1-{n}".encode() for n in range(len(found))]
