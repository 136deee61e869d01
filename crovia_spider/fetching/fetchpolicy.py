"""The fetch policy as pure rules: which hops a feed request may take (docs/spider.md, 9).

A feed request, and every redirect hop after it, may reach a loopback, private, link-local,
multicast or otherwise reserved address only on the very host and port of the configured feed URL;
no hop may go from https to http, or leave http(s). A feed on 127.0.0.1 or on an intranet keeps
working, but cannot send the crawler anywhere else inside. `FetchPolicyMiddleware`
(crovia_spider/fetching/middlewares.py) applies these rules to every request after DNS resolution;
this
module only classifies, it never resolves or connects.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Sequence
from typing import NamedTuple
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest

_DEFAULT_PORTS = {"http": 80, "https": 443}
# IANA's special-purpose registries; what is not listed (and, for IPv6, inside 2000::/3) is global.
_V4 = tuple(
    (ipaddress.IPv4Network(net), kind)
    for net, kind in (
        ("0.0.0.0/8", "unspecified (0.0.0.0/8, 'this network')"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared address space (100.64.0.0/10, carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved (IETF protocol assignments)"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "reserved (6to4 relay anycast)"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved (240.0.0.0/4, broadcast)"),
    )
)
_V6 = tuple(
    (ipaddress.IPv6Network(net), kind)
    for net, kind in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("100::/64", "reserved (discard-only)"),
        ("64:ff9b:1::/48", "reserved (local-use NAT64)"),
        ("2001::/23", "reserved (IETF protocol assignments, Teredo)"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "private (unique local)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private (site-local)"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


class FetchRefused(IgnoreRequest):
    """A request or redirect hop the fetch policy refuses; the message says why."""


class Origin(NamedTuple):
    """Host (lower case, no trailing dot) and port (the scheme's default if none is given)."""

    host: str
    port: int


def origin_of(url: str) -> Origin:
    """The origin of an http(s) URL. Raises ValueError for a malformed port."""
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    return Origin(host, parts.port or _DEFAULT_PORTS.get(parts.scheme, 0))


def is_configured_origin(url: str, origins: Collection[Origin]) -> bool:
    """True when `url` is on one of `origins` (the very host name and port, scheme aside)."""
    return origin_of(url) in origins


def scheme_refusal(url: str, previous_url: str | None) -> str | None:
    """Why a hop to `url` after `previous_url` (None for the first request) is refused for its
    scheme: not http(s), or a downgrade from https to http. None when the scheme is fine."""
    scheme = urlsplit(url).scheme
    if scheme not in _DEFAULT_PORTS:
        return f"scheme {scheme or '(none)'!r} is not http or https"
    if previous_url is not None and scheme == "http" and urlsplit(previous_url).scheme == "https":
        return f"redirect from https ({previous_url}) to http"
    return None


def address_refusal(address: str) -> str | None:
    """The kind of a non-global address ("loopback", "private", "link-local", "multicast", ...);
    None for a global unicast address. IPv4 carried in IPv6 (mapped, NAT64, 6to4) is judged as that
    IPv4 address. Raises ValueError when `address` is not an IP address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone changes nothing
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_v4(ip)
        if embedded is not None:
            return address_refusal(str(embedded))
        table = _V6
    else:
        table = _V4
    for network, kind in table:
        if ip in network:
            return kind
    if isinstance(ip, ipaddress.IPv6Address) and ip not in _GLOBAL_UNICAST:
        return "reserved (outside global unicast 2000::/3)"
    return None


def resolved_refusal(host: str, addresses: Sequence[str]) -> str | None:
    """Why `host`, resolved to `addresses`, must not be reached: the first address that is not
    global. None when all are global, or none was found (the download then reports the failed
    lookup itself)."""
    for address in addresses:
        kind = address_refusal(address)
        if kind is not None:
            if address == host:
                return f"{address} is a {kind} address"
            return f"{host} resolves to {address}, a {kind} address"
    return None


def is_ip_literal(host: str) -> bool:
    """True when `host` (as urlsplit gives it) is an IP address rather than a name."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour
