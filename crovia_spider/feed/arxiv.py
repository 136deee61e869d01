"""arXiv metadata of a feed entry: paper id, version and announce type.

Two formats are in the wild. The 2024+ RSS gives `arxiv:announce_type` and starts each description
with `arXiv:2606.19004v1 Announce Type: cross`; the legacy RSS 1.0 (RDF) feed puts the id and a
marker in the title: `Title. (arXiv:1805.09166v1 [hep-ex] CROSS LISTED)` (UPDATED for replacements).
Atom (the arXiv API) carries the versioned abs URL as the entry id. A record of arXiv's OAI-PMH
interface (crovia_spider/feed/oaipmh.py) carries its id and newest version under ARXIV_KEY: its
item's `object.arxiv` says `"source": "oai-pmh"`, and its fingerprint is the one the RSS item of
the same version has (`fingerprint_abstract`), so a paper read both ways is one item, one version.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

ANNOUNCE_TYPES = ("new", "cross", "replace", "replace-cross")
OAI_SOURCE = "oai-pmh"  # `object.arxiv.source` of an item read from arXiv's OAI-PMH interface
# The key an OAI-PMH entry carries its (id, version) under: no XML name holds a NUL, so no feed
# entry feedparser makes can claim it.
ARXIV_KEY = "\x00arxiv"
EXCERPT_CHARS = 1000  # pipelines/normalize.py: the summary excerpt the fingerprint reads
# New-style ids (2007+) and old-style archive/number ids (hep-th/9901001, math.GT/0309136).
_PAPER = r"(?P<id>[0-9]{4}\.[0-9]{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/[0-9]{7})"
_ID = _PAPER + r"(?:v(?P<version>[0-9]+))?"
_DESCRIPTION = re.compile(rf"^\s*arXiv:{_ID}\s+Announce Type:\s*(?P<type>[a-z-]+)", re.I | re.A)
_LEGACY_TITLE = re.compile(
    rf"\(arXiv:{_ID}\s*\[[^\]]*\]\s*(?P<marker>CROSS LISTED|UPDATED)?\)\s*\Z"
)
_ABS_PATH = re.compile(rf"/abs/{_ID}")  # fullmatch, not ^...$ (which lets a final newline by)
OAI_ID = re.compile(r"oai:arXiv\.org:" + _PAPER, re.A)  # fullmatch: an OAI-PMH identifier
_RSS_HEADER = re.compile(r"^arXiv:\S+\s+Announce Type:\s*\S+\s*(?:Abstract:\s*)?", re.I)
_LEGACY_TYPES = {None: "new", "CROSS LISTED": "cross", "UPDATED": "replace"}


def is_arxiv_url(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host == "arxiv.org" or host.endswith(".arxiv.org")


def abs_url(paper_id: str) -> str:
    """The version-less abstract page of a paper: the item's stable identity."""
    return f"https://arxiv.org/abs/{paper_id}"


def arxiv_meta(entry: dict[str, Any], link: str) -> dict[str, Any] | None:
    """`{"id", "version", "announce_type"}` of an arXiv entry, or None if it is not one.

    `version` is an int (0 when the feed does not say); `announce_type` is one of ANNOUNCE_TYPES, or
    "" when the format does not say (the arXiv API).
    """
    if not is_arxiv_url(link):
        return None
    oai = entry.get(ARXIV_KEY)
    if type(oai) is tuple and len(oai) == 2:  # crovia_spider/feed/oaipmh.py made it
        return {"id": oai[0], "version": oai[1], "announce_type": "", "source": OAI_SOURCE}
    found = _from_description(entry) or _from_legacy_title(entry) or _from_ids(entry, link)
    if found is None:
        return None
    paper_id, version, announce = found
    announce = (entry.get("arxiv_announce_type") or announce or "").strip().lower()
    return {"id": paper_id, "version": version, "announce_type": announce}


def _from_description(entry: dict[str, Any]) -> tuple[str, int, str] | None:
    match = _DESCRIPTION.match(entry.get("summary") or "")
    if match is None:
        return None
    return match["id"], int(match["version"] or 0), match["type"].lower()


def _from_legacy_title(entry: dict[str, Any]) -> tuple[str, int, str] | None:
    match = _LEGACY_TITLE.search(entry.get("title") or "")
    if match is None:
        return None
    return match["id"], int(match["version"] or 0), _LEGACY_TYPES[match["marker"]]


def _from_ids(entry: dict[str, Any], link: str) -> tuple[str, int, str] | None:
    for candidate in (entry.get("id") or "", link):
        try:
            path = urlsplit(candidate).path
        except ValueError:  # the feed's own id is any text: "http://[x/abs/..." is no URL
            continue
        match = _ABS_PATH.fullmatch(path)
        if match is not None:
            return match["id"], int(match["version"] or 0), ""
    return None


def fingerprint_abstract(meta: dict[str, Any], summary_excerpt: str) -> str:
    """The abstract an arXiv item's fingerprint hashes (pipelines/fingerprint.py), from its summary
    excerpt (the first EXCERPT_CHARS characters of its description as plain text).

    An RSS item's excerpt starts with `arXiv:ID Announce Type: T Abstract:`, taken off: what is
    left of the abstract is the excerpt's length less that header's. An OAI-PMH record's excerpt
    is the abstract alone: it is cut where the RSS excerpt of the same version in the paper's
    primary category ends (`new` for a first version, `replace` for a later one), so both have one
    fingerprint and a paper read both ways is one version."""
    if meta.get("source") == OAI_SOURCE:
        announce = "new" if meta["version"] <= 1 else "replace"
        header = f"arXiv:{meta['id']}v{meta['version']} Announce Type: {announce} Abstract: "
        return summary_excerpt[: max(0, EXCERPT_CHARS - len(header))]
    return _RSS_HEADER.sub("", summary_excerpt, count=1)
