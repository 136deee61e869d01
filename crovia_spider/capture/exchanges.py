"""What a browser capture's page asked for and got: its exchanges, their manifest, the verdict.

Every request the page made is one `Exchange`, in the order the browser made them: the main
document first, then each subresource, each redirect hop its own. An exchange is either refused
(never sent: the fetch policy, robots.txt for a navigation, a method or a budget of the page),
answered (a status, the heads as sent and received and the body, each kept as a blob), or
failed (sent, no usable answer: an error, or cut when the page's time ran out). The manifest is
the canonical JSON of them all (schema MANIFEST_SCHEMA), kept as a blob and signed by digest in
the capture record (`browser.exchanges_sha256`, ledger/records/capture.py), so the record stays
one short ledger line however many requests a page makes, and every byte is still accounted for.

`verdict` decides what the capture is worth: `failed` without a main document, `blocked` when the
main document is a wall (crovia_spider/capture/walls.py), `partial` when a request failed, was
refused or cut, or the page never finished loading, else `complete`.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from ledger.canonical import canonical_json
from ledger.records.capture import BLOCKED, COMPLETE, FAILED, MAX_REASONS, PARTIAL, REASON_CHARS

MANIFEST_SCHEMA = "crovia.browser_exchanges.v1"


@dataclass
class Exchange:
    """One request of the page, and what came of it (fields empty when they do not apply)."""

    url: str
    method: str = "GET"
    resource_type: str = ""  # the browser's word: document, script, fetch, image, ...
    navigation: bool = False
    status: int | None = None
    redirect_to: str = ""  # a 3xx's Location, made absolute (the next exchange asks it)
    ip_address: str = ""
    tls_certificate_sha256: str = ""
    request_head_sha256: str = ""
    request_body_sha256: str = ""
    response_head_sha256: str = ""
    body_sha256: str = ""
    body_length: int | None = None
    content_type: str = ""
    refused: str = ""  # never sent: why
    error: str = ""  # sent, no usable answer: why
    cut: bool = False  # no answer when the page's time ran out

    def facts(self) -> dict[str, Any]:
        """The exchange as the manifest holds it: empty fields left out."""
        return {k: v for k, v in asdict(self).items() if v not in ("", None, False) or k == "url"}

    @property
    def failed(self) -> bool:
        """No usable answer: an error, a cut, or an error status (4xx, 5xx)."""
        return bool(self.error) or (self.status is not None and self.status >= 400)

    def problem(self) -> str:
        """Why this exchange leaves the page incomplete, in one line ("" when it does not)."""
        if self.refused:
            return f"refused {self.url}: {self.refused}"
        if self.cut:
            return f"cut {self.url}: {self.error}"
        if self.error:
            return f"failed {self.url}: {self.error}"
        if self.status is not None and self.status >= 400:
            return f"failed {self.url}: HTTP {self.status}"
        return ""


@dataclass
class Exchanges:
    """The exchanges of one page, and the blobs they name (digest -> bytes)."""

    items: list[Exchange] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict, repr=False)
    kept_bytes: int = 0

    def add(self, exchange: Exchange) -> Exchange:
        self.items.append(exchange)
        return exchange

    def keep(self, data: bytes) -> str:
        """Keep `data` as a blob; its sha256 hex."""
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self.blobs:
            self.blobs[digest] = data
            self.kept_bytes += len(data)
        return digest

    @property
    def refused(self) -> int:
        return sum(1 for e in self.items if e.refused)

    @property
    def failed(self) -> int:
        return sum(1 for e in self.items if not e.refused and e.failed)

    def manifest(self, page_url: str) -> bytes:
        """The canonical JSON of every exchange (see the module)."""
        return canonical_json(
            {
                "schema": MANIFEST_SCHEMA,
                "page": page_url,
                "exchanges": [e.facts() for e in self.items],
            }
        )


def verdict(
    main: Exchange | None,
    subresources: list[Exchange],
    wall: list[str],
    loaded: bool,
    failure: str = "",
) -> tuple[str, list[str]]:
    """(verdict, reasons) of a browser capture (see the module): `main` the main document's
    final exchange (None when none answered), `wall` the evidence walls.py found on it, `loaded`
    whether the page's load event came in time, `failure` why the rendering itself failed."""
    if main is None or main.status is None or failure:
        why = failure or (main.problem() if main is not None else "") or "no main document"
        return FAILED, _reasons([why])
    if wall:
        return BLOCKED, _reasons(wall)
    problems = [p for p in (e.problem() for e in subresources) if p]
    if not loaded:
        problems.insert(0, "the page's load event did not come within its time")
    if problems:
        return PARTIAL, _reasons(problems)
    return COMPLETE, []


def _reasons(lines: list[str]) -> list[str]:
    """At most MAX_REASONS lines of at most REASON_CHARS characters; the last one says how many
    more the manifest lists."""
    cut = [line[:REASON_CHARS] for line in lines if line]
    if len(cut) > MAX_REASONS:
        more = len(cut) - (MAX_REASONS - 1)
        cut = [*cut[: MAX_REASONS - 1], f"and {more} more, listed in the exchanges' manifest"]
    return cut
