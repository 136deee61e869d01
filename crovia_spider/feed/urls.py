"""Links and guids from a feed made safe to sign: http(s) URLs with nothing raw in them.

`web_url()` promises an absolute http or https URL whose scheme and host are lower-case (an IDN
host in its ASCII form), whose default port and user-info are dropped, whose empty path is `/`, and
in which every character outside URL syntax (spaces, controls, quotes, non-ASCII) is
percent-encoded as UTF-8, existing `%XX` escapes kept; or "" for anything else (`javascript:`,
`file:`, `data:`, no host, an unusable port). Applying it twice changes nothing.
`guid_identifier()` is what names an item whose guid is no URL: `guid:<vendor>:<guid>`, the guid
percent-encoded the same way and `%` itself too, so the name holds no space or control character.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_URL_SAFE = "!$&'()*+,;=:@/?#[]~%"
_GUID_SAFE = "!$&'()*+,;=:@/?~"
_AUTHORITY_DELIMITERS = frozenset("[]@/?#\\")


def web_url(url: str, base_url: str = "") -> str:
    """`url` (resolved against `base_url`) as a safe http(s) URL, or "" (see the module doc)."""
    if url in _SETTLED and not base_url:
        return url  # an answer of this function: applying it again changes nothing
    safe = _web_url(url, base_url)
    if safe:
        if len(_SETTLED) >= _SETTLED_KEPT:
            _SETTLED.clear()
        _SETTLED[safe] = None
    return safe


# Recent answers of web_url: an entry's link is made safe when the entry is read, and asked for
# again as its identity's canonical link (crovia_spider/feed/identity.py).
_SETTLED: dict[str, None] = {}
_SETTLED_KEPT = 4096


@lru_cache(maxsize=4096)  # a pure function, asked for an entry's link and guid, often the same
def _web_url(url: str, base_url: str) -> str:
    url = url.strip()
    if not url:
        return ""
    try:
        parts = urlsplit(urljoin(base_url, url) if base_url else url)
        scheme, port = parts.scheme.lower(), parts.port
        host = _ascii_host(parts.hostname or "")
    except (ValueError, UnicodeError):
        return ""
    if scheme not in _DEFAULT_PORTS or not _usable_host(host):
        return ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path, query, fragment = (_encode(part) for part in (parts.path, parts.query, parts.fragment))
    return urlunsplit((scheme, netloc, path or "/", query, fragment))


def is_web_url(text: str) -> bool:
    """True when `text` names an http(s) URL (before cleaning)."""
    try:
        return urlsplit(text.strip()).scheme.lower() in _DEFAULT_PORTS
    except ValueError:
        return False


def guid_identifier(vendor: str, guid: str) -> str:
    """`guid:<vendor>:<guid, percent-encoded>`: the name of an item whose guid is no URL."""
    return f"guid:{vendor}:{quote(guid, safe=_GUID_SAFE)}"


def _usable_host(host: str) -> bool:
    """A host the URL can name again: an IPv6 literal (in its brackets), or a name with none of
    the characters that end or split an authority (urlsplit would read `http://]/` again as no
    URL at all, so the result would not be stable)."""
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return False
        return True
    return bool(host) and not any(c in _AUTHORITY_DELIMITERS for c in host)


@lru_cache(maxsize=1024)  # few distinct hosts, and Python's idna codec is slow
def _ascii_host(hostname: str) -> str:
    """An IDN host in its ASCII form (UnicodeError for one IDNA refuses)."""
    return hostname.encode("idna").decode("ascii")


def _encode(part: str) -> str:
    return quote(part, safe=_URL_SAFE, errors="replace")
