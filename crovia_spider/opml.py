"""OPML subscription lists (what feed readers export) into `[[feeds]]` entries of feeds.toml.

Every `<outline>` with an `xmlUrl` is a feed. The vendor id is made from its title (lower-case,
`_` for anything else, made unique with `_2`, `_3`...). Feeds whose URL is already configured are
skipped; entries are appended as text, so the file's comments survive, and the result is validated
before it replaces the file.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from crovia_spider.exceptions import ConfigError
from crovia_spider.feeds_config import load_feeds


@dataclass
class ImportResult:
    added: list[dict[str, str]] = field(default_factory=list)
    already_configured: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "URL: reason"


def read_opml(data: bytes) -> list[dict[str, str]]:
    """The feeds of an OPML document as {"title", "url"}. Raises ConfigError if it is not OPML."""
    if b"<!ENTITY" in data:  # an OPML file is untrusted input too: no entity declarations
        raise ConfigError("refusing an OPML file that declares DTD entities")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ConfigError(f"not an OPML file: {exc}") from exc
    if root.tag != "opml":
        raise ConfigError(f"not an OPML file: the root element is <{root.tag}>")
    return [
        {"title": (o.get("title") or o.get("text") or "").strip(), "url": o.get("xmlUrl").strip()}
        for o in root.iter("outline")
        if o.get("xmlUrl")
    ]


def import_opml(opml: Path, feeds_file: Path, *, category: str | None = None) -> ImportResult:
    """Append the OPML's new feeds to `feeds_file` (created if missing). Raises ConfigError when the
    OPML is unreadable or the resulting file would not validate (then nothing is written)."""
    try:
        outlines = read_opml(opml.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{opml}: {exc}") from exc
    existing = load_feeds(feeds_file) if feeds_file.exists() else []
    vendors = {f.vendor for f in existing}
    urls = {f.url for f in existing}
    result = ImportResult()
    for outline in outlines:
        url = outline["url"]
        if url in urls:
            result.already_configured.append(url)
        elif urlsplit(url).scheme not in ("http", "https"):
            result.skipped.append(f"{url}: not an http(s) URL")
        else:
            entry = {"vendor": _unique(_slug(outline["title"] or url), vendors), "url": url}
            entry |= {"title": outline["title"]} if outline["title"] else {}
            entry |= {"category": category} if category else {}
            vendors.add(entry["vendor"])
            urls.add(url)
            result.added.append(entry)
    if result.added:
        _append(feeds_file, result.added)
    return result


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
    tables = "".join(
        "\n[[feeds]]\n"
        + "".join(f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in e.items())
        for e in entries
    )
    tmp = feeds_file.with_name(feeds_file.name + ".import")
    tmp.write_text(old + "\n# Imported from OPML\n" + tables, encoding="utf-8")
    try:
        load_feeds(tmp)  # the whole result must validate, or the old file stays
    except ConfigError:
        tmp.unlink()
        raise
    os.replace(tmp, feeds_file)
