"""Is a feed URL's host a public address? For `crovia feeds import-opml`, which takes other
people's lists: an OPML file must not quietly point the crawler at this machine or its network.

Checked without the network: an IP literal (IPv4 in any form a resolver accepts, such as
`2130706433` or `0x7f.1`, and IPv6, IPv4-mapped included) must be a global unicast address, and
`localhost` (with its subdomains) is refused. Other names are not resolved at import: where a
name points can change at any time, so checking it once here would promise what it cannot keep.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

# inet_aton also reads "1" or "0x7f.1" as addresses; only such all-number hosts are tried.
_NUMERIC_HOST = re.compile(r"[0-9a-fx.]+", re.I)


def non_public_reason(url: str) -> str | None:
    """Why the host of `url` is not a public address ("loopback address 127.0.0.1"), or None.

    Never raises: a URL whose host cannot be read is for the feed list's own validation.
    """
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return f"local name {host}"
    address = _ip_literal(host)
    if address is None:
        return None
    return _kind(address)


def _ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if not _NUMERIC_HOST.fullmatch(host) or not any(c.isdigit() for c in host):
            return None
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """The first kind of non-public address `address` is, most specific first; None if public."""
    kinds = (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
        ("non-public", not address.is_global),
    )
    for kind, matches in kinds:
        if matches:
            return f"{kind} address {address}"
    return None
