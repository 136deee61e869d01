"""One OAI-PMH `ListRecords` response of arXiv (metadata prefix `arXivRaw`) as entries of
feedparser's shape.

A source of kind "oaipmh" names arXiv's OAI-PMH endpoint (https://export.arxiv.org/oai2); the spider
asks it for the records of a set, day by day, and follows every resumption token
(crovia_spider/spiders/oaipmh_walk.py). This reader reads one response page, untrusted, and never
fetches: the resumption token comes back in `OaiPage.token` for the spider to follow. The rules:

- the document is read by lxml's iterparse (as sitemaps are, crovia_spider/feed/sitemap.py), never
  in recover mode, entities never resolved, no DTD loaded, nothing fetched; a document declaring
  DTD entities, or holding a DOCTYPE at all (an OAI-PMH response has none), is refused whole, and
  so is one that is not well-formed (a truncated page) or whose root is not `OAI-PMH` in the
  protocol's namespace. Each `<record>` is freed once read, so a page costs its records, not its
  tree;
- a page of more than MAX_PAGE_RECORDS records is refused as soon as the one past them is read
  (arXiv serves 1,000 a page; a page of 50,000 says something is wrong with the server);
- `<error code="noRecordsMatch">` is an empty list (the day or window holds no record); any other
  error (`badResumptionToken`, `badArgument`, ...) makes the page `failed`, its `oai_error` the
  code, so the spider can tell an expired token from a broken page;
- each record becomes `{"id": "oai:arXiv.org:<id>v<N>", "link": "https://arxiv.org/abs/<id>",
  "title", "summary", "published"}` plus what coverage reads (`datestamp`, `categories`) and the
  paper's id and newest version under ARXIV_KEY (read by crovia_spider/feed/arxiv.py): the id is
  the header's `oai:arXiv.org:` identifier, which the metadata's `<id>` must repeat; the version
  is the highest `<version version="vN">`; the title and abstract are the metadata's, the abstract
  HTML-escaped (it is text, and the item's description is read as markup, as the RSS feeds' is),
  each cut at TEXT_CHARS; `published` is the datestamp. A record whose identifier is no arXiv id,
  whose datestamp is no date, or which has no metadata, no version or no title is left out alone
  and counted (`malformed_entries`);
- a deleted record (`<header status="deleted">`) is no entry: it is counted in `excluded` and
  listed in `deleted` as (arXiv id, datestamp), so the harvest and the coverage record say it;
- the `<resumptionToken>` is `token`: None when the page has none (a complete list in one page),
  "" when it is empty (the last page), else its text; one longer than MAX_TOKEN_CHARS, or holding
  a space or a control character, is `token_error` instead (the spider stops the list there).

Runs in the parser worker, under its ceilings (crovia_spider/feed/ceilings.py).
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import lxml.etree

from crovia_spider.feed.arxiv import ARXIV_KEY, OAI_ID, abs_url
from crovia_spider.feed.body import DECLARES_ENTITIES, ParsedFeed
from crovia_spider.feed.prolog import ascii_compatible, declares_entities_anywhere

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
METADATA_PREFIX = "arXivRaw"  # the one this reader reads: every version of every paper
MAX_PAGE_RECORDS = 10_000
MAX_TOKEN_CHARS = 1_000
TEXT_CHARS = 10_000  # a title or an abstract (arXiv's abstracts are at most 1,920 characters)
MAX_CATEGORIES = 50
NO_RECORDS = "noRecordsMatch"
BAD_TOKEN = "badResumptionToken"
VERSION = "oai-pmh-2.0"
_DATE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?", re.ASCII)
_CATEGORY = re.compile(r"[a-z][a-z-]*(?:\.[A-Za-z][A-Za-z-]*)?", re.ASCII)
_VERSION = re.compile(r"v([1-9][0-9]{0,5})", re.ASCII)
_TOKEN_BAD = re.compile(r"[\x00-\x20\x7f-\x9f]|\s")
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.I)


@dataclass
class OaiPage(ParsedFeed):
    """One ListRecords response: its entries (ParsedFeed's fields) and the protocol's own."""

    response_date: str = ""  # <responseDate>, the server's clock when it answered
    token: str | None = None  # <resumptionToken>: None absent, "" the list's end
    token_error: str = ""  # why the token cannot be followed ("" when it can)
    complete_list_size: int | None = None
    cursor: int | None = None
    oai_error: str = ""  # the code of an <error>, "" when none
    deleted: list[tuple[str, str]] = field(default_factory=list)  # (arXiv id, datestamp)

    @property
    def ends_list(self) -> bool:
        """True when this page is the last of its list (no token to follow)."""
        return not self.failed and not self.token and not self.token_error


class _Unread(Exception):
    """The page is refused or unreadable: a `failed` OaiPage with this reason."""


def parse_oaipmh(body: bytes, headers: dict[str, str], options: Mapping[str, Any]) -> OaiPage:
    """The records of the ListRecords response `body` (see the module docstring). Never raises:
    a page refused or unreadable is a `failed` OaiPage saying why."""
    try:
        return _parse(body)
    except _Unread as exc:  # the records it holds are lost (at least one: that is why it failed)
        lost = max(1, body.count(b"</record>"))
        return OaiPage(version=VERSION, error=str(exc), failed=True, lost_entries=lost)
    except MemoryError:  # in the worker: past its ceiling (crovia_spider/feed/ceilings.py)
        reason = "parsing needed more memory than it may use (CROVIA_PARSE_MEMORY_MB)"
        return OaiPage(version=VERSION, error=f"unreadable OAI-PMH page: {reason}", failed=True)
    except Exception as exc:  # a reader bug must cost this page only, and be told
        error = f"unreadable OAI-PMH page: {type(exc).__name__}: {exc}"[:500]
        return OaiPage(version=VERSION, error=error, failed=True)


def _parse(body: bytes) -> OaiPage:
    text = ascii_compatible(body)
    if declares_entities_anywhere(text):
        raise _Unread(DECLARES_ENTITIES)
    if _DOCTYPE.search(text):
        raise _Unread("refused: the document has a DOCTYPE (an OAI-PMH response has none)")
    page = OaiPage(version=VERSION)
    records = 0
    events = lxml.etree.iterparse(
        io.BytesIO(body),
        events=("start", "end"),
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    root = None
    try:
        for event, element in events:
            if root is None:
                root = element
                if element.tag != f"{{{OAI_NS}}}OAI-PMH":
                    raise _Unread(f"not an OAI-PMH response (root <{_local(element.tag):.80}>)")
                continue
            if event != "end" or not isinstance(element.tag, str):
                continue
            name = element.tag
            if name == f"{{{OAI_NS}}}record":
                records += 1
                if records > MAX_PAGE_RECORDS:
                    raise _Unread(
                        f"refused: more than {MAX_PAGE_RECORDS:,} records in one page"
                        " (arXiv serves 1,000)"
                    )
                _take_record(page, element)
                _free(element)
            elif name == f"{{{OAI_NS}}}responseDate" and element.getparent() is root:
                page.response_date = (element.text or "").strip()[:40]
            elif name == f"{{{OAI_NS}}}resumptionToken":
                _take_token(page, element)
            elif name == f"{{{OAI_NS}}}error" and element.getparent() is root:
                page.oai_error = page.oai_error or (element.get("code") or "unknown")[:80]
                if page.oai_error != NO_RECORDS:
                    message = " ".join("".join(element.itertext()).split())[:200]
                    page.error = page.error or f"OAI-PMH error {page.oai_error}: {message}"
    except lxml.etree.XMLSyntaxError as exc:
        raise _Unread(f"unreadable OAI-PMH page: {exc}"[:500]) from None
    if root is None:
        raise _Unread("unreadable OAI-PMH page: no XML element")
    if page.error:
        page.failed = True
        page.entries.clear()
    elif not page.oai_error and root.find(f"{{{OAI_NS}}}ListRecords") is None:
        raise _Unread("not a ListRecords response (no <ListRecords>, no <error>)")
    if page.malformed_entries:
        page.error = (
            f"{page.malformed_entries} record(s) malformed (no arXiv identifier, datestamp,"
            " version or title), left out"
        )
    return page


def _take_record(page: OaiPage, record: lxml.etree._Element) -> None:
    header = record.find(f"{{{OAI_NS}}}header")
    if header is None:
        page.malformed_entries += 1
        return
    paper = _paper_id(_child_text(header, "identifier"))
    datestamp = _date(_child_text(header, "datestamp"))
    if paper is None or datestamp is None:
        page.malformed_entries += 1
        return
    if header.get("status") == "deleted":
        page.excluded += 1
        page.deleted.append((paper, datestamp))
        return
    entry = _entry(record, paper, datestamp)
    if entry is None:
        page.malformed_entries += 1
        return
    page.entries.append(entry)


def _entry(record: lxml.etree._Element, paper: str, datestamp: str) -> dict[str, Any] | None:
    metadata = record.find(f"{{{OAI_NS}}}metadata")
    raw = next(iter(metadata), None) if metadata is not None else None
    if raw is None or _local(raw.tag) != "arXivRaw":
        return None
    fields: dict[str, str] = {}
    version = 0
    for child in raw:
        if not isinstance(child.tag, str):
            continue
        name = _local(child.tag)
        if name == "version":
            found = _VERSION.fullmatch(child.get("version") or "")
            version = max(version, int(found[1])) if found else version
        elif name in ("id", "title", "abstract", "categories") and name not in fields:
            fields[name] = "".join(child.itertext())[:TEXT_CHARS]
    title = fields.get("title", "").strip()
    if not version or not title or fields.get("id", paper).strip() != paper:
        return None
    categories = [c for c in fields.get("categories", "").split() if _CATEGORY.fullmatch(c)]
    return {
        "id": f"oai:arXiv.org:{paper}v{version}",
        "link": abs_url(paper),
        "title": title,
        "summary": html.escape(fields.get("abstract", "").strip(), quote=False),
        "published": datestamp,
        "datestamp": datestamp,
        "categories": " ".join(categories[:MAX_CATEGORIES]),
        ARXIV_KEY: (paper, version),
    }


def _take_token(page: OaiPage, element: lxml.etree._Element) -> None:
    token = (element.text or "").strip()
    page.complete_list_size = _count(element.get("completeListSize"))
    page.cursor = _count(element.get("cursor"))
    if len(token) > MAX_TOKEN_CHARS:
        page.token_error = (
            f"resumption token of {len(token):,} characters (at most {MAX_TOKEN_CHARS:,})"
        )
    elif _TOKEN_BAD.search(token):
        page.token_error = "resumption token holding a space or a control character"
    page.token = "" if page.token_error else token


def _count(value: str | None) -> int | None:
    value = value or ""
    return int(value) if value.isascii() and value.isdigit() and len(value) < 12 else None


def _paper_id(identifier: str) -> str | None:
    found = OAI_ID.fullmatch(identifier)
    return found["id"] if found else None


def _date(value: str) -> str | None:
    found = _DATE.fullmatch(value)
    return found[1] if found else None


def _child_text(element: lxml.etree._Element, name: str) -> str:
    child = element.find(f"{{{OAI_NS}}}{name}")
    return (child.text or "").strip() if child is not None else ""


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _free(element: lxml.etree._Element) -> None:
    """Free a record read, and the siblings read before it (each record costs itself only)."""
    element.clear()
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]
