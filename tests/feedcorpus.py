"""A deterministic corpus of messy feeds, generated here, for the corpus crawl test.

    for feed in corpus():                 # 7 shapes x 7 encodings x 7 text variants = 343 feeds
        feed.name, feed.body, feed.headers

Every feed is one of seven shapes (RSS 0.90, 0.91, 0.92, 1.0 (RDF), 2.0; Atom 0.3, 1.0), served in
one of seven encoding set-ups (declaration, bytes and HTTP charset agreeing or not, BOMs, UTF-16),
with its titles and descriptions written one of seven ways (plain, escaped HTML, CDATA with script,
double-escaped, HTML named entities, controls and bidi overrides, references XML cannot read). Its
entries vary the identity cases: relative links under xml:base, missing guids, duplicate guids,
links shared by distinct guids, nothing at all to identify an entry. Every fifth feed or so is
ill-formed: cut mid-entry, an unclosed tag, or garbage after the root element.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

SHAPES = ("rss090", "rss091", "rss092", "rss10", "rss20", "atom03", "atom10")
TEXTS = (
    "Post {k}",
    "&lt;b&gt;Post&lt;/b&gt; {k} &lt;script&gt;alert(1)&lt;/script&gt;",
    "<![CDATA[<p>Post {k}</p><img src=x onerror=alert(1)><script>x()</script>]]>",
    "&amp;lt;i&amp;gt;Post&amp;lt;/i&amp;gt; {k} &amp;amp; more",
    "Caf&eacute; {k} &mdash; one&nbsp;two &hellip;",
    "Post {k} \u202eevil\u0085 \u0091q\u0092 &#x202E;x",
    "Post {k} &#xD800; &#x110000;",
)
# (encoding of the bytes, encoding declared in the prolog or None, charset of the HTTP header or
# None, byte-order mark)
ENCODINGS = (
    ("utf-8", "utf-8", None, b""),
    ("latin-1", "utf-8", None, b""),
    ("utf-8", "iso-8859-1", None, b""),
    ("latin-1", None, None, b""),
    ("utf-8", "windows-1252", None, b"\xef\xbb\xbf"),
    ("utf-16", "utf-8", None, b""),  # Python's utf-16 codec writes its own BOM
    ("utf-8", "utf-8", "iso-8859-1", b""),
)
_NS = {
    "rss090": "http://my.netscape.com/rdf/simple/0.9/",
    "rss10": "http://purl.org/rss/1.0/",
    "atom03": "http://purl.org/atom/ns#",
    "atom10": "http://www.w3.org/2005/Atom",
}
_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
BASE = "https://lab.example.org/blog/"


@dataclass
class CorpusFeed:
    name: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def corpus() -> Iterator[CorpusFeed]:
    """Every feed of the corpus, always the same bytes in the same order."""
    for s, shape in enumerate(SHAPES):
        for e, encoding in enumerate(ENCODINGS):
            for t, text in enumerate(TEXTS):
                name = f"c_{shape}_e{e}_t{t}"
                entries = _entries(name, text, (e + t) % 6)
                document = _document(shape, entries, encoding[1])
                document = _break(document, (s + e + t) % 5 == 0, (s + t) % 3)
                yield CorpusFeed(name, _encode(document, encoding), _headers(shape, encoding))


def _entries(name: str, text: str, case: int) -> list[dict[str, str]]:
    """Three entries; `case` picks the identity trouble they share."""
    entries = []
    for k in range(3):
        entry = {
            "title": text.format(k=k),
            "text": text.format(k=f"{k} of {name}"),
            "link": f"{BASE}{name}/{k}",
            "guid": f"tag:lab.example.org,2026:{name}:{k}",
        }
        if case == 1:
            entry["link"] = f"posts/{name}/{k}"  # relative: xml:base resolves it
        elif case == 2:
            entry["guid"] = ""
        elif case == 3:
            entry["guid"] = f"tag:lab.example.org,2026:{name}:same"
        elif case == 4:
            entry["link"] = f"{BASE}{name}/shared"
        elif case == 5 and k == 2:
            entry["link"] = entry["guid"] = ""
        entries.append(entry)
    return entries


def _document(shape: str, entries: list[dict[str, str]], declared: str | None) -> str:
    prolog = (
        f'<?xml version="1.0" encoding="{declared}"?>\n' if declared else '<?xml version="1.0"?>\n'
    )
    if shape.startswith("atom"):
        return prolog + _atom(shape, entries)
    if shape in ("rss090", "rss10"):
        return prolog + _rdf(shape, entries)
    return prolog + _rss(shape, entries)


def _rss(shape: str, entries: list[dict[str, str]]) -> str:
    version = {"rss091": "0.91", "rss092": "0.92", "rss20": "2.0"}[shape]
    items = "".join(
        "<item>"
        + f"<title>{e['title']}</title><description>{e['text']}</description>"
        + (f"<link>{e['link']}</link>" if e["link"] else "")
        + (
            f'<guid isPermaLink="false">{e["guid"]}</guid>'
            if e["guid"] and version != "0.91"
            else ""
        )
        + "<pubDate>Mon, 27 Apr 2026 06:00:00 GMT</pubDate></item>\n"
        for e in entries
    )
    return (
        f'<rss version="{version}" xml:base="{BASE}"><channel><title>Corpus</title>'
        f"<link>{BASE}</link><description>corpus</description>\n{items}</channel></rss>\n"
    )


def _rdf(shape: str, entries: list[dict[str, str]]) -> str:
    items = "".join(
        f'<item rdf:about="{e["guid"] or e["link"] or "urn:none"}" xml:base="{BASE}">'
        f"<title>{e['title']}</title><description>{e['text']}</description>"
        + (f"<link>{e['link']}</link>" if e["link"] else "")
        + "</item>\n"
        for e in entries
    )
    return (
        f'<rdf:RDF xmlns:rdf="{_RDF}" xmlns="{_NS[shape]}"><channel rdf:about="{BASE}">'
        f"<title>Corpus</title><link>{BASE}</link><description>corpus</description></channel>\n"
        f"{items}</rdf:RDF>\n"
    )


def _atom(shape: str, entries: list[dict[str, str]]) -> str:
    kind = ' type="html"' if shape == "atom10" else ' type="text/html" mode="escaped"'
    stamp = "updated" if shape == "atom10" else "modified"
    items = "".join(
        "<entry>"
        + f"<title{kind}>{e['title']}</title><summary{kind}>{e['text']}</summary>"
        + (f'<link rel="alternate" href="{e["link"]}"/>' if e["link"] else "")
        + (f"<id>{e['guid']}</id>" if e["guid"] else "")
        + f"<{stamp}>2026-04-27T06:00:00Z</{stamp}></entry>\n"
        for e in entries
    )
    version = ' version="0.3"' if shape == "atom03" else ""
    return (
        f'<feed xmlns="{_NS[shape]}"{version} xml:base="{BASE}"><title>Corpus</title>'
        f"<id>{BASE}</id><{stamp}>2026-04-27T06:00:00Z</{stamp}>\n{items}</feed>\n"
    )


def _break(document: str, broken: bool, how: int) -> str:
    """`document` made ill-formed when `broken`: cut mid-entry, an unclosed tag, or junk after."""
    if not broken:
        return document
    if how == 0:
        return document[: document.rindex("<title")]
    if how == 1:
        return document.replace("<title", "<em><title", 1)
    return document + "<junk>&bogus; <<>\n"


def _encode(document: str, encoding: tuple[str, str | None, str | None, bytes]) -> bytes:
    codec, _, _, bom = encoding
    return bom + document.encode(codec, errors="xmlcharrefreplace")


def _headers(shape: str, encoding: tuple[str, str | None, str | None, bytes]) -> dict[str, str]:
    kind = "application/atom+xml" if shape.startswith("atom") else "application/rss+xml"
    charset = encoding[2]
    return {"Content-Type": kind + (f"; charset={charset}" if charset else "")}
