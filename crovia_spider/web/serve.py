"""`crovia serve DIR`: a read-only static server for a published directory, on Twisted.

It maps `/v/` and `/v/<axiom_id>` to the verifier page and serves files below DIR, nothing else: no
directory listings, no dot files, no `..` (raw or percent-encoded), no encoded slashes, and no
file whose real path (symlinks resolved) leaves DIR. A request must arrive within a deadline, and
open connections are bounded (crovia_spider/web/bounded.py). Every answer carries a strict
Content-Security-Policy: the page may load scripts, styles and data from this origin only. Full
tiles and entry bundles are cached for a year (immutable), the rest revalidated (no-cache).
docs/verifier.md gives the same rules for nginx.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote_to_bytes

from twisted.web import resource, server

from crovia_spider.web.bounded import (
    MAX_CONNECTIONS,
    MAX_PER_ADDRESS,
    REQUEST_SECONDS,
    BoundedSite,
    limited,
)

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    b"Content-Security-Policy": CONTENT_SECURITY_POLICY.encode(),
    b"X-Content-Type-Options": b"nosniff",
    b"Referrer-Policy": b"no-referrer",
    b"Cross-Origin-Resource-Policy": b"same-origin",
}
CONTENT_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".json": b"application/json",
}
OCTET_STREAM = b"application/octet-stream"
TEXT_PLAIN = b"text/plain; charset=utf-8"
VERIFIER_PATH = re.compile(rb"/v/(axm_[0-9a-f]{64})?")
# c2sp.org/tlog-tiles: a full hash tile or entry bundle never changes (a partial one, `.p/<W>`,
# is replaced by a fuller one); everything else, the checkpoint first, must be revalidated.
FULL_TILE = re.compile(rb"/tile/(?:entries|[0-9]+)/(?:x[0-9]{3}/)*[0-9]{3}")
IMMUTABLE = b"public, max-age=31536000, immutable"
NO_CACHE = b"no-cache"
_SEGMENT_FORBIDDEN = re.compile(rb"[\x00-\x1f\x7f/\\]")


class PublishedDirectory(resource.Resource):
    """The whole site as one leaf resource: every path is checked here, not by child lookup."""

    isLeaf = True

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = Path(root).resolve(strict=True)

    def render(self, request: server.Request) -> bytes:
        for name, value in HEADERS.items():
            request.setHeader(name, value)
        if request.method not in (b"GET", b"HEAD"):
            request.setResponseCode(405)
            request.setHeader(b"Allow", b"GET, HEAD")
            request.setHeader(b"Content-Type", TEXT_PLAIN)
            return b"read-only\n"
        return self._file(request)

    def _file(self, request: server.Request) -> bytes:
        path = self.resolve(request.path)
        if path is None:
            request.setResponseCode(404)
            request.setHeader(b"Content-Type", TEXT_PLAIN)
            return b"not found\n"
        request.setHeader(b"Content-Type", _content_type(path))
        request.setHeader(b"Cache-Control", cache_control(request.path))
        return path.read_bytes()

    def resolve(self, raw_path: bytes) -> Path | None:
        """The file below the root that `raw_path` names, or None for anything refused."""
        if VERIFIER_PATH.fullmatch(raw_path):
            raw_path = b"/v/index.html"
        if not raw_path.startswith(b"/"):
            return None
        segments = [unquote_to_bytes(part) for part in raw_path[1:].split(b"/")]
        if not segments or any(_refused(segment) for segment in segments):
            return None
        candidate = self.root.joinpath(*(os.fsdecode(s) for s in segments))
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not real.is_relative_to(self.root) or not real.is_file():
            return None
        return real


def cache_control(raw_path: bytes) -> bytes:
    """Full tiles and entry bundles are immutable; anything else is revalidated (no-cache)."""
    return IMMUTABLE if FULL_TILE.fullmatch(raw_path) else NO_CACHE


def _refused(segment: bytes) -> bool:
    return not segment or segment.startswith(b".") or bool(_SEGMENT_FORBIDDEN.search(segment))


def _content_type(path: Path) -> bytes:
    if path.name == "checkpoint":
        return TEXT_PLAIN
    return CONTENT_TYPES.get(path.suffix, OCTET_STREAM)


# How far back `newest_item_receipt` looks for an item: a crawl that finds nothing new still signs
# one fetch record per feed, so items may lie some bundles back; a hint printed at start-up
# never reads a whole log.
ITEM_SEARCH_BUNDLES = 64


def newest_item_receipt(directory: Path) -> tuple[str, str]:
    """(axiom id, axiom type) of the receipt to point a person to in the published `directory`:
    the newest item (AX.OBS) within the last ITEM_SEARCH_BUNDLES entry bundles, else the newest
    leaf whatever it is (a fetch record, AX.FETCH); ("", "") when the log cannot be read. Only a
    hint to print: the page itself checks everything it shows."""
    from ledger.exceptions import LedgerError
    from ledger.tlog.checkpoint import parse_checkpoint
    from ledger.tlog.note import parse_note
    from ledger.tlog.tiles import TILE_WIDTH, decode_bundle, tile_for

    newest = ("", "")
    try:
        note = parse_note((directory / "checkpoint").read_bytes())
        size = parse_checkpoint(note.text).size
        last = (size - 1) // TILE_WIDTH
        for index in range(last, max(-1, last - ITEM_SEARCH_BUNDLES), -1):
            tile = tile_for(0, index, size)
            for entry in reversed(
                decode_bundle((directory / tile.entries_path).read_bytes(), tile)
            ):
                found = _id_and_type(entry)
                newest = newest if newest[0] else found
                if found[1] == "AX.OBS":
                    return found
    except (OSError, ValueError, LedgerError):
        pass
    return newest


def receipt_words(axiom_type: str) -> str:
    """What the receipt `newest_item_receipt` found is, for the line that points to it."""
    if axiom_type == "AX.OBS":
        return "item receipt"
    return "receipt (a feed fetch record: no item among the newest leaves)"


def _id_and_type(entry: bytes) -> tuple[str, str]:
    import json

    envelope = json.loads(entry)
    axiom_id = envelope.get("axiom_id") if isinstance(envelope, dict) else None
    if not (isinstance(axiom_id, str) and axiom_id.isprintable()):
        raise ValueError("an entry without a printable axiom_id")
    kind = envelope.get("axiom_type")
    return axiom_id, kind if isinstance(kind, str) and kind.isprintable() else ""


def site(
    root: Path,
    *,
    request_seconds: float = REQUEST_SECONDS,
    max_connections: int = MAX_CONNECTIONS,
    max_per_address: int = MAX_PER_ADDRESS,
) -> server.Site:
    """A twisted.web Site serving `root` read-only (GET and HEAD; anything else gets 405; a
    request with a body gets 413 before any of it is read), each request read within
    `request_seconds` and at most `max_connections` open, `max_per_address` from one address
    (crovia_spider/web/bounded.py)."""
    web = BoundedSite(
        PublishedDirectory(root),
        requestFactory=limited(0),  # no request bodies
        request_seconds=request_seconds,
        max_connections=max_connections,
        max_per_address=max_per_address,
    )
    web.displayTracebacks = False
    return web
