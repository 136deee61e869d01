"""The fetch policy as data: which addresses a hop may not reach, and which hops are refused.

Every address here is only classified, never connected to. The middleware test at the end feeds
Scrapy requests to the policy the way the downloader would, with no downloader behind it: a refused
request raises before any download could be scheduled.
"""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from crovia_spider.config.feeds import FeedConfig
from crovia_spider.fetching.fetchpolicy import (
    FetchRefused,
    address_refusal,
    is_configured_origin,
    origin_of,
    resolved_refusal,
    scheme_refusal,
)
from crovia_spider.fetching.middlewares import FetchPolicyMiddleware
from tests.asyncrun import run


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("100.64.0.1", "shared"),
        ("100.127.255.254", "shared"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.0.8", "reserved"),
        ("192.0.2.1", "documentation"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("fec0::1", "private"),
        ("ff02::1", "multicast"),
        ("ff0e::1", "multicast"),
        ("2001:db8::1", "documentation"),
        ("100::1", "reserved"),
        ("2001::1", "reserved"),  # Teredo and the other IETF assignments
        ("64:ff9b:1::1", "reserved"),
        ("::2", "reserved"),  # outside global unicast 2000::/3
        ("4000::1", "reserved"),
        # IPv4 written inside IPv6 is judged as the IPv4 address it carries.
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("2002:a9fe:a9fe::1", "link-local"),  # 6to4 of 169.254.169.254
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
    ],
)
def test_internal_addresses_are_refused_with_their_kind(address, kind):
    assert kind in address_refusal(address)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "151.101.1.69",
        "172.15.255.255",  # just below 172.16/12
        "172.32.0.1",  # just above
        "100.63.255.255",  # just below 100.64/10
        "100.128.0.1",
        "169.253.0.1",
        "2606:4700::6810:84e5",
        "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8
        "2002:808:808::1",  # 6to4 of 8.8.8.8
    ],
)
def test_global_unicast_addresses_pass(address):
    assert address_refusal(address) is None


def test_a_host_name_is_not_an_address():
    with pytest.raises(ValueError):
        address_refusal("localhost")


FEED = "http://127.0.0.1:8080/feed.xml"


@pytest.mark.parametrize(
    ("url", "same"),
    [
        ("http://127.0.0.1:8080/other.xml?x=1", True),
        ("http://127.0.0.1:8080", True),
        ("https://127.0.0.1:8080/feed.xml", True),  # the scheme is checked apart (downgrade)
        ("http://127.0.0.1:8081/feed.xml", False),
        ("http://127.0.0.2:8080/feed.xml", False),
        ("http://localhost:8080/feed.xml", False),  # another name, even for the same address
        ("http://127.1:8080/feed.xml", False),
    ],
)
def test_only_the_very_host_and_port_of_the_feed_count_as_configured(url, same):
    assert is_configured_origin(url, {origin_of(FEED)}) is same


def test_default_ports_and_case_are_normalised():
    assert origin_of("https://Example.ORG./feed") == origin_of("https://example.org:443/x")
    assert origin_of("http://example.org/feed") == origin_of("http://example.org:80/")
    assert origin_of("http://[::1]:9/") == ("::1", 9)


@pytest.mark.parametrize(
    ("url", "previous", "refused"),
    [
        ("http://example.org/feed", None, False),
        ("https://example.org/feed", None, False),
        ("https://example.org/feed", "http://example.org/feed", False),  # an upgrade is fine
        ("http://example.org/feed", "https://example.org/feed", True),
        ("http://example.org/feed", "HTTPS://example.org/feed", True),
        ("ftp://example.org/feed", None, True),
        ("file:///etc/passwd", "http://example.org/feed", True),
    ],
)
def test_scheme_rules(url, previous, refused):
    assert (scheme_refusal(url, previous) is not None) is refused


def test_downgrade_reason_names_both_schemes():
    reason = scheme_refusal("http://example.org/feed", "https://example.org/feed")
    assert "https" in reason and "http" in reason


def test_resolved_refusal_names_the_first_internal_address():
    assert resolved_refusal("cdn.example.org", ["151.101.1.69", "2606:4700::1"]) is None
    reason = resolved_refusal("intranet.example.org", ["151.101.1.69", "10.0.0.7"])
    assert "intranet.example.org" in reason and "10.0.0.7" in reason and "private" in reason


def test_nothing_resolved_is_left_to_the_download_to_report():
    # A name that does not resolve is a DNS failure the downloader reports as such.
    assert resolved_refusal("nowhere.invalid", []) is None


# -- the middleware, fed requests as the downloader would feed them -------------------------------


@pytest.fixture
def middleware():
    crawler = get_crawler(Spider)
    return FetchPolicyMiddleware.from_crawler(crawler)


def hop(url: str, feed_url: str = FEED, *previous: str) -> Request:
    """A request of the feed at `feed_url` (as the spider sends it), after the hops `previous`."""
    meta = {"feed": FeedConfig(vendor="lab", url=feed_url)}
    if previous:
        meta["redirect_urls"] = list(previous)
    return Request(url, meta=meta)


def decide(middleware, request):
    return run(middleware.process_request(request))  # tests/asyncrun.py: a thread of its own


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/x",
        "http://[::ffff:169.254.169.254]/x",
        "http://10.0.0.1:8080/feed.xml",
        "http://127.0.0.1:8081/feed.xml",
        "http://127.0.0.2:8080/feed.xml",
        "http://[::1]:8080/feed.xml",
        "http://0.0.0.0:8080/feed.xml",
    ],
)
def test_a_redirect_to_an_internal_address_is_refused_before_download(middleware, target):
    with pytest.raises(FetchRefused) as refused:
        decide(middleware, hop(target, FEED, FEED))
    assert target in str(refused.value)


def test_the_configured_feed_and_its_own_host_and_port_pass(middleware):
    assert decide(middleware, hop(FEED)) is None
    assert decide(middleware, hop("http://127.0.0.1:8080/moved.xml", FEED, FEED)) is None


def test_a_public_hop_needs_no_lookup_when_it_is_an_address(middleware):
    request = hop("http://8.8.8.8/feed", "https://example.org/f", "http://x.example.org/")
    assert decide(middleware, request) is None


def test_https_to_http_is_refused_even_on_the_same_host(middleware):
    feed = "https://127.0.0.1:8443/feed.xml"
    with pytest.raises(FetchRefused, match="https"):
        decide(middleware, hop("http://127.0.0.1:8443/feed.xml", feed, feed))


def test_a_request_without_a_feed_may_reach_any_configured_feed_origin():
    # robots.txt requests carry no feed: they may go to a configured feed's host and port only.
    crawler = get_crawler(Spider)
    crawler.spider = Spider("t")
    crawler.spider.feeds = [FeedConfig(vendor="lab", url=FEED)]
    middleware = FetchPolicyMiddleware.from_crawler(crawler)
    assert decide(middleware, Request("http://127.0.0.1:8080/robots.txt")) is None
    with pytest.raises(FetchRefused):
        decide(middleware, Request("http://127.0.0.1:9/robots.txt"))
