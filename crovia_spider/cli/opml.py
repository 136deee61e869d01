"""OPML subscription lists (what feed readers export) into `[[feeds]]` entries of feeds.toml.

Every `<outline>` with an `xmlUrl` is a feed. The document is decoded first (byte-order mark,
UTF-16/32 told by its zero bytes, else the declared encoding, else UTF-8), and only then searched
for entity declarations, which refuse the whole file: a UTF-16 file cannot hide one. Each outline
then stands alone: one that would not make a valid entry (a bad URL, a control character in it)
or whose host is not a public address (crovia_spider/fetching/addresses.py; `allow_private` lets
those
in) is skipped with its reason and counted, and the others are imported. Control characters are
dropped from titles. The vendor id is made from the title (lower-case, `_` for anything else,
made unique with `_2`, `_3`...). Feeds whose URL is already configured are left alone; entries are
appended as text, so the file's comments survive, and the result is validated before it replaces
the file.

An OPML file has bounds, each refused with exit 2 before anything is written: MAX_OPML_BYTES (told
by the file's size, before it is read), MAX_OPML_DEPTH nested elements, and MAX_FEEDS feeds, in
the OPML and in the feed list it would make (the parse stops at the first feed over; no tree is
built). A 22 MB OPML of 300,000 feeds took 31 s and 488 MB and was imported whole.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from crovia_spider.config.feeds import MAX_FEEDS, feed_from_table, load_feeds
from crovia_spider.config.tables import read_bounded
from crovia_spider.exceptions import ConfigError
from crovia_spider.feed.prolog import BOMS
from crovia_spider.fetching.addresses import non_public_reason

MAX_OPML_BYTES = 8 << 20  # 8 MiB: MAX_FEEDS outlines take about 1.5 MB
MAX_OPML_DEPTH = 64  # folders of folders of outlines; readers export 3 or 4

_ENTITY = re.compile(r"<!ENTITY", re.I)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DECLARED = re.compile(rb"""<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
# The first four bytes of `<?xm` in each wide encoding without a byte-order mark (XML Appendix F).
_WIDE = {
    b"\x00\x00\x00<": "utf-32-be",
    b"<\x00\x00\x00": "utf-32-le",
    b"\x00<\x00?": "utf-16-be",
    b"<\x00?\x00": "utf-16-le",
}


@dataclass
class ImportResult:
    added: list[dict[str, str]] = field(default_factory=list)
    already_configured: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "URL: reason"


def decode_document(data: bytes) -> str:
    """The text of an XML document. Raises ConfigError for an unknown or wrong encoding."""
    codec, start = _encoding(data)
    try:
        return codecs.lookup(codec).decode(data[start:])[0]
    except LookupError:
        raise ConfigError(f"not an OPML file: unknown encoding {codec!r}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not an OPML file: cannot decode it as {codec}: {exc}") from None


def _encoding(data: bytes) -> tuple[str, int]:
    for bom, codec in BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    if data[:4] in _WIDE:
        return _WIDE[data[:4]], 0
    declared = _DECLARED.match(data)
    return (declared[1].decode("ascii") if declared else "utf-8"), 0


def read_opml(data: bytes) -> list[dict[str, str]]:
    """The feeds of an OPML document as {"title", "url"}. Raises ConfigError if it is not OPML or
    declares entities (an OPML file is untrusted input too)."""
    text = decode_document(data)
    if _ENTITY.search(text):
        raise ConfigError("refusing an OPML file that declares DTD entities")
    outlines = _Outlines()
    parser = ET.XMLParser(target=outlines)
    try:
        parser.feed(text)  # text, so expat ignores the declaration's encoding
        parser.close()
    except ET.ParseError as exc:
        raise ConfigError(f"not an OPML file: {exc}") from exc
    return outlines.feeds


class _Outlines:
    """An XMLParser target that keeps only the feeds (no tree), and stops the parse at a bound."""

    def __init__(self) -> None:
        self.feeds: list[dict[str, str]] = []
        self.depth = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        if self.depth == 0 and tag != "opml":
            raise ConfigError(f"not an OPML file: the root element is <{tag}>")
        self.depth += 1
        if self.depth > MAX_OPML_DEPTH:
            raise ConfigError(f"elements nested more than {MAX_OPML_DEPTH} deep, the most allowed")
        if tag == "outline" and attrib.get("xmlUrl"):
            if len(self.feeds) == MAX_FEEDS:
                raise ConfigError(f"more than {MAX_FEEDS:,} feeds, the most an import may add")
            title = attrib.get("title") or attrib.get("text") or ""
            self.feeds.append(
                {"title": _CONTROL.sub("", title).strip(), "url": attrib["xmlUrl"].strip()}
            )

    def end(self, tag: str) -> None:
        self.depth -= 1

    def close(self) -> None:
        return None


def import_opml(
    opml: Path, feeds_file: Path, *, category: str | None = None, allow_private: bool = False
) -> ImportResult:
    """Append the OPML's new feeds to `feeds_file` (created if missing). Raises ConfigError when the
    OPML is unreadable or the resulting file would not validate (then nothing is written)."""
    try:
        data = read_bounded(opml, MAX_OPML_BYTES, "an OPML file")
    except OSError as exc:
        raise ConfigError(f"{opml}: {exc}") from exc
    try:
        outlines = read_opml(data)
    except ConfigError as exc:  # the document's fault: name the file
        raise ConfigError(f"{opml}: {exc}") from None
    existing = load_feeds(feeds_file) if feeds_file.exists() else []
    vendors = {f.vendor for f in existing}
    urls = {f.url for f in existing}
    result = ImportResult()
    for outline in outlines:
        url = outline["url"]
        if url in urls:
            result.already_configured.append(url)
            continue
        entry = _entry(outline, _unique(_slug(outline["title"] or url), vendors), category)
        reason = _refusal(entry, allow_private)
        if reason:
            result.skipped.append(f"{url}: {reason}")
            continue
        vendors.add(entry["vendor"])
        urls.add(url)
        result.added.append(entry)
    total = len(existing) + len(result.added)
    if total > MAX_FEEDS:
        raise ConfigError(
            f"{opml}: its {len(result.added):,} new feeds would make {feeds_file} hold {total:,},"
            f" more than the {MAX_FEEDS:,} a feed list may have"
        )
    if result.added:
        _append(feeds_file, result.added)
    return result


def _entry(outline: dict[str, str], vendor: str, category: str | None) -> dict[str, str]:
    entry = {"vendor": vendor, "url": outline["url"]}
    entry |= {"title": outline["title"]} if outline["title"] else {}
    return entry | ({"category": category} if category else {})


def _refusal(entry: dict[str, str], allow_private: bool) -> str | None:
    """Why `entry` is not imported, or None: it must read back as a valid `[[feeds]]` table."""
    try:
        feed_from_table(tomllib.loads(_table(entry))["feeds"][0])
    except (TypeError, ValueError) as exc:  # TOMLDecodeError is a ValueError
        return str(exc)
    private = None if allow_private else non_public_reason(entry["url"])
    return f"{private} (--allow-private imports it)" if private else None


def _table(entry: dict[str, str]) -> str:
    return "\n[[feeds]]\n" + "".join(f"{k} = {_toml_string(v)}\n" for k, v in entry.items())


def _toml_string(value: str) -> str:
    # A JSON string is a TOML basic string once DEL, which TOML wants escaped, is escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return slug if slug and slug[0].isalnum() else f"feed_{slug}".rstrip("_")


def _unique(vendor: str, taken: set[str]) -> str:
    candidate, n = vendor, 1
    while candidate in taken:
        n += 1
        candidate = f"{vendor}_{n}"
    return candidate


def _append(feeds_file: Path, entries: list[dict[str, str]]) -> None:
    old = feeds_file.read_text(encoding="utf-8") if feeds_file.exists() else ""
    tmp = feeds_file.with_name(feeds_file.name + ".import")
    tmp.write_text(
        old + "\n# Imported from OPML\n" + "".join(map(_table, entries)), encoding="utf-8"
    )
    try:
        load_feeds(tmp)  # the whole result must validate, or the old file stays
    except ConfigError:
        tmp.unlink()
        raise
    os.replace(tmp, feeds_file)
