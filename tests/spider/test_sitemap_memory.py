"""A sitemap walk's memory is bounded by what it keeps (issue 47, observation 2), a crawl on
127.0.0.1 each, its process tree's memory watched.

An index of 35 gzipped sitemaps, 8 MB on the wire, each of 50,000 URLs of about 950 characters
(48 MB uncompressed): the walk kept every sitemap's entries until it ended, applied
CROVIA_MAX_SITEMAP_URLS only then, and counted CROVIA_SITEMAP_BYTES on the bytes received
(gzipped), so the crawl's process tree peaked at 2,336 MiB (in 64 s) for 8 MB on the wire.
Now the walk stops at the URL cap (1,000 here) after the first sitemap, the others each a part
saying so: 387 MiB (in 9 s). RSS_BOUND_MIB is the bound held, with margin for the machine.

One crawl's ledger growth from the source is bounded as docs/spider.md ("Source kinds", sitemap)
says: at most CROVIA_MAX_SITEMAP_URLS items, each a ledger line and its index rows (ITEM_BYTES at
the longest fields a sitemap entry has), its one fetch record, and the bodies it read.
"""

from __future__ import annotations

import gzip
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl import (
    crovia,
    envelopes,
    fetch_records,
    start_crawl,
    write_feeds,
)
from tests.feedserver import FeedServer, Reply
from tests.proctree import descendants
from tests.sitefixture import GZIP, SITEMAP_NS, XML, sitemap_index

CHILDREN = 35  # 35 x 230 KB: 8 MB on the wire
URLS = 50_000  # the protocol's most a file
PAD = "p" * 900
URL_CAP = 1_000  # CROVIA_MAX_SITEMAP_URLS of the first crawl: 1,000 items to issue, not 50,000
RSS_BOUND_MIB = 640  # 387 measured; 2,336 before
ITEM_BYTES = 20 << 10  # docs/spider.md: a line of at most ~14 KB and ~5 KB of index, per item
LEDGER_FIXED = 1 << 20  # the fetch record, the run record, seals, the tree's nodes
CANNOT_TELL = 4


class Site:
    """The index and its sitemaps, scripted on one server for the module; `plain` the length of
    each sitemap uncompressed."""

    def __init__(self, server: FeedServer) -> None:
        self.server, self.base = server, server.base
        self.names = [f"/s{c}.xml.gz" for c in range(CHILDREN)]
        index = sitemap_index(self.base, self.names)
        server.script("index.xml", Reply(body=index, headers=XML))
        bodies, self.plain = gzipped_sitemaps(self.base, CHILDREN)
        for name, body in zip(self.names, bodies, strict=True):
            server.script(name, Reply(body=body, headers=GZIP))
        self.index = len(index)
        self.wire = len(index) + sum(len(body) for body in bodies)  # 8 MB

    def fetched(self) -> list[str]:
        return [name for name in self.names if self.server.requests_for(name)]

    def sent(self) -> int:
        return sum(len(body) for _, body in self.server.sent)


@pytest.fixture(scope="module")
def site(module_feed_server: FeedServer) -> Iterator[Site]:
    yield Site(module_feed_server)


def gzipped_sitemaps(base: str, count: int) -> tuple[list[bytes], list[int]]:
    """`count` gzipped sitemaps, each of URLS URLs of about 950 characters (48 MB uncompressed,
    230 KB gzipped), compressed once, and their lengths uncompressed: each is a gzip member of
    its own (the XML declaration, the root and one URL of its own, /own/N, so no two bodies are
    the same), then one shared member (the other URLs, the same in each, and the root's closing
    tag). A reader reads the members as one stream."""
    rows = "".join(f"<url><loc>{base}/news/{PAD}/{n}</loc></url>" for n in range(URLS - 1))
    tail = f"{rows}</urlset>".encode()
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip member
    shared = deflate.compress(tail) + deflate.flush()
    head = '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{ns}"><url><loc>{url}</loc></url>'
    heads = [head.format(ns=SITEMAP_NS, url=f"{base}/own/{c}").encode() for c in range(count)]
    return [gzip.compress(h, mtime=0) + shared for h in heads], [len(h) + len(tail) for h in heads]


class TreePeak:
    """The resident memory of a process and its descendants, read from /proc every 50 ms while
    it runs: `peak` is the sum of each process's own peak (VmHWM, the most it ever held
    resident), at least the tree's peak whenever those peaks fell; `most` the largest sum of
    VmRSS one reading saw. MiB."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.hwm: dict[int, int] = {}
        self.most = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    @property
    def peak(self) -> float:
        return sum(self.hwm.values()) / 1024

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.is_set():
            rss = 0
            for pid in self._tree():
                status = _status(pid)
                if "VmHWM" in status:
                    self.hwm[pid] = max(self.hwm.get(pid, 0), status["VmHWM"])
                    rss += status["VmRSS"]
            self.most = max(self.most, rss // 1024)
            time.sleep(0.05)

    def _tree(self) -> set[int]:
        return {self.pid} | {pid for pid, _ in descendants(self.pid)}


def _status(pid: int) -> dict[str, int]:
    """VmHWM and VmRSS (KiB) of `pid`; {} once it has gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {
        name: int(value.split()[0])
        for name, _, value in (line.partition(":") for line in lines)
        if name in ("VmHWM", "VmRSS")
    }


def crawl_measured(
    tmp_path: Path, feeds: list[dict] | str, *args: str
) -> tuple[int, TreePeak, str]:
    """`scrapy crawl vendor_press` as tests/crawl.py runs it, its tree's memory watched."""
    write_feeds(tmp_path / "feeds.toml", feeds)
    with start_crawl(tmp_path, *args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        peak = TreePeak(proc.pid)
        try:
            _, err = proc.communicate(timeout=300)
        finally:
            peak.stop()
    return proc.returncode, peak, err


def ledger_bytes(tmp_path: Path) -> int:
    return sum(p.stat().st_size for p in (tmp_path / "ledger").rglob("*") if p.is_file())


def walk_record(tmp_path: Path) -> dict:
    (record,) = fetch_records(tmp_path)
    return record["body"]


def test_an_index_of_gzipped_sitemaps_is_read_in_bounded_memory(tmp_path: Path, site: Site):
    site.server.clear()
    feeds = [
        {"vendor": "lab", "url": site.base + "/index.xml", "kind": "sitemap", "capture": False}
    ]
    code, peak, err = crawl_measured(tmp_path, feeds, "-s", f"CROVIA_MAX_SITEMAP_URLS={URL_CAP}")
    assert code == 0, err[-3000:]
    assert peak.peak < RSS_BOUND_MIB, f"{peak.peak:.0f} MiB at the peak ({peak.most} at once)"
    # The cap reached in the first sitemap, no other is fetched: each is a part saying why.
    assert site.fetched() == ["/s0.xml.gz"]
    record = walk_record(tmp_path)
    first, *others = record["parts"]
    assert "error" not in first and first["url"] == site.base + "/s0.xml.gz"
    assert len(others) == CHILDREN - 1
    assert all(
        part["error"].endswith(f"holds the {URL_CAP:,} URLs a source may read a crawl"
                               " (CROVIA_MAX_SITEMAP_URLS)")
        for part in others
    )  # fmt: skip
    assert record["entries"] | {"identities_sha256": ""} == {
        "count": URL_CAP,
        "identities_sha256": "",
        "limit": URL_CAP,
        "in_body": URLS + CHILDREN - 1,  # the sitemap's URLs, and one unread a sitemap not read
        "over_limit": URLS - URL_CAP,
        "unread": CHILDREN - 1,
    }
    # The ledger grew by its items, its fetch record and the bodies read, as documented.
    lines = (tmp_path / "ledger" / "axiom_ledger.jsonl").read_bytes().splitlines()
    assert len(envelopes(tmp_path)) == URL_CAP and max(map(len, lines)) <= 65_535
    kept = [p for p in (tmp_path / "ledger" / "bodies").rglob("*") if p.is_file()]
    assert len(kept) == 2  # the index and the one sitemap read
    grown = ledger_bytes(tmp_path)
    assert grown <= URL_CAP * ITEM_BYTES + site.sent() + LEDGER_FIXED, grown
    # Read again from the kept bodies, the record says the same (or absent would not answer).
    past_limit = crovia(
        tmp_path, "absent", "--url", f"{site.base}/news/{PAD}/{URLS - 2}", "--vendor", "lab",
        "--at", "2100-01-01",
    )  # fmt: skip
    assert past_limit.returncode == CANNOT_TELL, past_limit.stdout + past_limit.stderr
    read_again = f"{URL_CAP} entries read of {URLS + CHILDREN - 1} ({URLS - URL_CAP} past the"
    assert f"{read_again} entry limit, {CHILDREN - 1} unreadable)" in past_limit.stdout
    not_read = crovia(
        tmp_path, "absent", "--url", f"{site.base}/own/7", "--vendor", "lab", "--at", "2100-01-01"
    )
    assert not_read.returncode == CANNOT_TELL, not_read.stdout + not_read.stderr
    assert crovia(tmp_path, "audit").returncode == 0


def test_the_bytes_a_walk_reads_are_counted_uncompressed(tmp_path: Path, site: Site):
    """With `include` picking one URL a sitemap, the URL cap is never reached: what stops the walk
    is CROVIA_SITEMAP_BYTES, counted as read (48 MB a sitemap), not as received (230 KB): two
    sitemaps are read, the third is stopped while it inflates past what is left, and no other is
    fetched. Before, all 35 were read (8 MB received, under any budget)."""
    site.server.clear()
    budget = site.plain[0] + site.plain[1] + site.plain[2] // 10
    feeds = (
        f'[[feeds]]\nvendor = "lab"\nurl = "{site.base}/index.xml"\nkind = "sitemap"\n'
        'include = ["/own/"]\ncapture = false\n'
    )
    code, peak, err = crawl_measured(tmp_path, feeds, "-s", f"CROVIA_SITEMAP_BYTES={budget}")
    assert code == 0, err[-3000:]
    assert peak.peak < RSS_BOUND_MIB, f"{peak.peak:.0f} MiB at the peak ({peak.most} at once)"
    assert site.fetched() == ["/s0.xml.gz", "/s1.xml.gz", "/s2.xml.gz"]
    parts = walk_record(tmp_path)["parts"]
    assert ["error" in part for part in parts[:2]] == [False, False]
    left = budget - site.index - site.plain[0] - site.plain[1]  # when the third was fetched
    assert parts[2]["body_sha256"] and parts[2]["error"] == (
        f"refused: more than {left:,} bytes uncompressed, what the walk may still read"
        " (CROVIA_SITEMAP_BYTES)"
    )
    assert all(
        part["error"] == f"not fetched: the walk read {budget:,} bytes of sitemaps, uncompressed"
        " (CROVIA_SITEMAP_BYTES)"
        for part in parts[3:]
    )
    assert len(parts) == CHILDREN
    issued = sorted(e["body"]["spider_record"]["url"] for e in envelopes(tmp_path))
    assert issued == [f"{site.base}/own/0", f"{site.base}/own/1"]
