"""A fixture OAI-PMH endpoint of arXiv on 127.0.0.1: `ListRecords` in arXivRaw, pages of records
with resumption tokens, and the faults a harvester meets.

    with OaiServer(records, page_size=2) as server:
        server.url          # the endpoint, as a [[feeds]] entry of kind "oaipmh" names it
        server.rss_url("cs.AI")  # an arXiv RSS feed of the category, from `server.rss`

The endpoint answers `verb=ListRecords` with `metadataPrefix`, `set`, `from` and `until` (records
by datestamp, a set by the categories' archive: "cs" holds cs.*), or with a `resumptionToken`.
Tokens are single-use, as many servers make them: one answered is answered again with
`badResumptionToken`. A list is cut into pages of `page_size` records. Faults, each scripted by
the test (`faults`): `retry_after` (page number -> how many times that page first answers `503
Retry-After: 2`), `fail_after_use` (page number -> answered 500 once, the token used up), and the
hostile shapes `endless` (every page names a new token), `loop` (the third page names the second's
token again), `huge` (page N holds 50,000 records), `entity_bomb` (page N declares a
billion-laughs entity). Every request is logged (`requests`: path with query, and when).

`rss(category, day, papers)` builds an arXiv RSS 2.0 feed (the 2024+ format) announcing `papers`
on `day`, as export.arxiv.org serves /rss/<category>: served at `server.rss_url(category)` once set
in `server.rss`. The plumbing is FeedServer's (tests/feedserver.py), each path scripted with this
endpoint's answer to the request's query.
"""

from __future__ import annotations

import html
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import format_datetime
from urllib.parse import parse_qs, urlsplit

from tests.feedserver import FeedServer, Reply

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
ABSTRACT = (
    "We study how language models reason about mathematics when they must communicate with each"
    " other, and find that a shared symbolic protocol emerges from scratch in a visually"
    " grounded task where the use of a numerical system helps extrapolation."
)


@dataclass
class Paper:
    """One arXiv record as the endpoint lists it."""

    id: str
    datestamp: str  # YYYY-MM-DD
    versions: int = 1
    categories: str = "cs.AI"
    title: str = ""
    abstract: str = ABSTRACT
    deleted: bool = False

    @property
    def set_spec(self) -> str:
        return self.categories.split()[0].split(".")[0]

    def title_text(self) -> str:
        return self.title or f"A study of paper {self.id}"


def record_xml(paper: Paper) -> str:
    """The `<record>` of `paper` in arXivRaw, as arXiv writes it (the title and abstract wrapped,
    the abstract indented)."""
    status = ' status="deleted"' if paper.deleted else ""
    header = (
        f"<header{status}>"
        f"<identifier>oai:arXiv.org:{paper.id}</identifier>"
        f"<datestamp>{paper.datestamp}</datestamp><setSpec>{paper.set_spec}</setSpec></header>"
    )
    if paper.deleted:
        return f"<record>{header}</record>\n"
    versions = "".join(
        f'<version version="v{n}"><date>Fri, 24 Apr 2026 17:59:59 GMT</date>'
        f"<size>120kb</size><source_type>D</source_type></version>"
        for n in range(1, paper.versions + 1)
    )
    words = paper.title_text().split()
    title = (
        " ".join(words[:4]) + "\n  " + " ".join(words[4:]) if len(words) > 4 else paper.title_text()
    )
    abstract = "  " + paper.abstract.replace(". ", ".\n")
    return (
        f"<record>{header}<metadata>"
        '<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/">'
        f"<id>{paper.id}</id><submitter>A. Author</submitter>{versions}"
        f"<title>{html.escape(title, quote=False)}</title><authors>A. Author, B. Author</authors>"
        f"<categories>{paper.categories}</categories>"
        f"<license>http://creativecommons.org/licenses/by/4.0/</license>"
        f"<abstract>{html.escape(abstract, quote=False)}\n</abstract>"
        "</arXivRaw></metadata></record>\n"
    )


def page_xml(
    records: str,
    token: str | None,
    *,
    cursor: int = 0,
    size: int = 0,
    request: str = "",
    error: str = "",
    prolog: str = "",
    now: str = "",
) -> bytes:
    """A whole OAI-PMH response: `records` (XML), then the resumption token (None: none; "":
    the empty one ending a list), or an `<error code=...>` instead of ListRecords."""
    now = now or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    head = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n{prolog}'
        f'<OAI-PMH xmlns="{OAI_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        f"<responseDate>{now}</responseDate>\n"
        f'<request verb="ListRecords">{html.escape(request)}</request>\n'
    )
    if error:
        code, _, message = error.partition(":")
        return (head + f'<error code="{code}">{message}</error>\n</OAI-PMH>\n').encode()
    tail = ""
    if token is not None:
        attributes = f'cursor="{cursor}" completeListSize="{size}"'
        tail = f"<resumptionToken {attributes}>{token}</resumptionToken>\n"
    return (head + f"<ListRecords>\n{records}{tail}</ListRecords>\n</OAI-PMH>\n").encode()


def rss(category: str, day: date, papers: list[tuple[Paper, str]]) -> bytes:
    """arXiv's RSS 2.0 of `category` announcing `papers` ((paper, announce type) pairs) on `day`."""
    published = format_datetime(datetime(day.year, day.month, day.day, 4, tzinfo=UTC))
    items = "".join(
        "<item>"
        f"<title>{html.escape(paper.title_text(), quote=False)}</title>"
        f"<link>https://arxiv.org/abs/{paper.id}</link>"
        f"<description>arXiv:{paper.id}v{paper.versions} Announce Type: {announce} \n"
        f"Abstract: {html.escape(paper.abstract, quote=False)}</description>"
        f'<guid isPermaLink="false">oai:arXiv.org:{paper.id}v{paper.versions}</guid>'
        f"<category>{category}</category><pubDate>{published}</pubDate>"
        f"<arxiv:announce_type>{announce}</arxiv:announce_type>"
        "<dc:creator>A. Author, B. Author</dc:creator></item>"
        for paper, announce in papers
    )
    return (
        '<rss xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:dc="http://purl.org/dc/elements/1.1/"'
        f' version="2.0"><channel><title>{category} updates on arXiv.org</title>'
        f"<link>http://rss.arxiv.org/rss/{category}</link>"
        f"<description>{category} updates on the arXiv.org e-print archive.</description>"
        f"<pubDate>{published}</pubDate>{items}</channel></rss>"
    ).encode()


@dataclass
class Faults:
    retry_after: dict[int, int] = field(default_factory=dict)  # page -> 503s before answering
    fail_after_use: dict[int, int] = field(default_factory=dict)  # page -> 500s, token used up
    endless: bool = False
    loop: bool = False
    huge: int = 0  # the page (number) that holds 50,000 records (deleted ones: 8 MB)
    entity_bomb: int = 0  # the page (number) that declares a billion-laughs entity


class OaiServer:
    """Start with `with OaiServer(records) as server:`; see the module docstring. Served by a
    FeedServer (tests/feedserver.py) on 127.0.0.1, its paths scripted with this endpoint's
    answers."""

    def __init__(self, records: list[Paper], page_size: int = 2) -> None:
        self.records = records
        self.page_size = page_size
        self.faults = Faults()
        self.rss: dict[str, bytes] = {}  # category -> RSS body served at /rss/<category>
        self.rss_status: dict[str, int] = {}  # category -> an error status instead
        self.requests: list[tuple[str, float]] = []
        self._lists: dict[str, list[str]] = {}  # token -> the list's pages (XML of records)
        self._used: set[str] = set()
        self._served: dict[int, int] = {}  # page number -> times answered (for faults)
        self._count = 0
        self._lock = threading.Lock()
        self._server = FeedServer()
        self.url = self._server.script("/oai2", self._answer)  # the endpoint

    def __enter__(self) -> OaiServer:
        self._server.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.__exit__(*exc_info)

    @property
    def base(self) -> str:
        return self._server.base

    def rss_url(self, category: str) -> str:
        """The address of the RSS feed of `category`: `rss[category]` when the test set it,
        `rss_status[category]` instead when set, else 404."""
        return self._server.script(f"/rss/{category}", self._answer)

    def oai_requests(self) -> list[str]:
        with self._lock:
            return [path for path, _ in self.requests if path.startswith("/oai2")]

    def _answer(self, target: str) -> Reply:
        with self._lock:
            self.requests.append((target, time.monotonic()))
            parts = urlsplit(target)
            if parts.path.startswith("/rss/"):
                category = parts.path[len("/rss/") :]
                if category in self.rss_status:
                    return Reply(self.rss_status[category], b"unavailable")
                if category in self.rss:
                    return Reply(200, self.rss[category], {"Content-Type": "application/rss+xml"})
                return Reply(404, b"no such feed")
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            return Reply(*self._oai(query))

    def _oai(self, query: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        xml = {"Content-Type": "text/xml; charset=utf-8"}
        if query.get("verb") != "ListRecords":
            return 200, page_xml("", None, error="badVerb:only ListRecords here"), xml
        if "resumptionToken" in query:
            token = query["resumptionToken"]
            if token in self._used or token not in self._lists:
                return 200, page_xml("", None, error=f"badResumptionToken:{token}"), xml
            pages = self._lists[token]
            number = int(token.rsplit("-", 1)[1])
        else:
            if query.get("metadataPrefix") != "arXivRaw":
                return 200, page_xml("", None, error="cannotDisseminateFormat:arXivRaw only"), xml
            pages = self._pages(query)
            if not pages:
                return 200, page_xml("", None, error="noRecordsMatch:nothing"), xml
            token, number = None, 1
            self._count += 1
        fault = self._fault(number)
        if fault is not None:
            if fault[0] == 500 and token is not None:
                self._used.add(token)
            return fault
        if token is not None:
            self._used.add(token)
        return 200, self._page(pages, number, token), xml

    def _fault(self, number: int) -> tuple[int, bytes, dict[str, str]] | None:
        seen = self._served.get(number, 0)
        self._served[number] = seen + 1
        if seen < self.faults.retry_after.get(number, 0):
            return 503, b"busy", {"Retry-After": "2"}
        if seen < self.faults.fail_after_use.get(number, 0):
            return 500, b"lost", {}
        return None

    def _page(self, pages: list[str], number: int, token: str | None) -> bytes:
        listing = f"L{self._count}" if token is None else token.rsplit("-", 1)[0]
        prolog = ""
        records = pages[number - 1] if number <= len(pages) else ""
        if number == self.faults.huge:
            day = pages_day(pages)
            records = "".join(
                record_xml(Paper(f"2611.{n:05d}", day, deleted=True)) for n in range(50_000)
            )
        if number == self.faults.entity_bomb:
            laughs = "".join(
                f'<!ENTITY l{n} "{("&l" + str(n - 1) + ";") * 10}">' for n in range(1, 10)
            )
            prolog = f'<!DOCTYPE OAI-PMH [<!ENTITY l0 "lol">{laughs}]>\n'
            records = records.replace("<title>", "<title>&l9;", 1)
        last = number >= len(pages) and not self.faults.endless
        if self.faults.loop and number == 3:
            next_token = f"{listing}-2"  # the second page's token, again
            self._used.discard(next_token)
        elif last:
            next_token = ""
        else:
            next_token = f"{listing}-{number + 1}"
            self._lists[next_token] = pages
        single = len(pages) == 1 and not self.faults.endless and not self.faults.loop
        return page_xml(
            records,
            None if single else next_token,
            cursor=(number - 1) * self.page_size,
            size=sum(p.count("<record>") for p in pages),
            prolog=prolog,
        )

    def _pages(self, query: dict[str, str]) -> list[str]:
        chosen = [
            p
            for p in self.records
            if (not query.get("set") or p.set_spec == query["set"])
            and query.get("from", "0000") <= p.datestamp <= query.get("until", "9999")
        ]
        chunks = [chosen[i : i + self.page_size] for i in range(0, len(chosen), self.page_size)]
        return ["".join(record_xml(p) for p in chunk) for chunk in chunks]


def pages_day(pages: list[str]) -> str:
    start = pages[0].index("<datestamp>") + len("<datestamp>")
    return pages[0][start : start + 10]
