"""A real, sealed ledger of items and their page captures, for the export tests.

Three items and their captures, each capture's blobs kept with BodyStore.put and each record
built by ledger.records.capture.new_capture_envelope, chained by `previous`:
- item A, two versions (the second edits the title): capture `gzip` of version 1 (a gzip-encoded
  HTML page, `Content-Encoding: gzip` and the compressed length in its kept head), then capture
  `chunked` of version 2 (chunked, no Content-Length);
- item B: capture `failed` (a timeout: no response);
- item C (another vendor): capture `pdf`, a PDF reached by a redirect, without request head.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nacl.signing

from ledger.envelope import new_envelope
from ledger.records.capture import new_capture_envelope
from ledger.store import BodyStore, Ledger
from tests.vectors.make_vectors import sample_record

RUN = hashlib.sha256(b"capture run").hexdigest()
ALPHA_TITLE = "Alpha page, as captured"
ALPHA_HTML = (
    "<!doctype html><html><head><meta charset='utf-8'><title>  Alpha page,\n as captured "
    "</title></head><body><article><h1>Alpha</h1><p>The first version of the page, café.</p>"
    "</article></body></html>"
).encode()
ALPHA2_HTML = ALPHA_HTML.replace(b"first version", b"second version")
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
UA = "crovia-spider/0.1 (+https://crovia.example/contact)"


@dataclass
class CaptureLedger:
    """The ledger directory, its key, and the ids and kept bytes the tests check against."""

    directory: Path
    key: nacl.signing.SigningKey
    items: dict[str, str] = field(default_factory=dict)  # "A1", "A2", "B", "C" -> axiom_id
    captures: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> full envelope
    blobs: dict[str, bytes] = field(default_factory=dict)  # sha256 hex -> bytes

    @property
    def pubkey(self) -> str:
        return bytes(self.key.verify_key).hex()

    def body(self, name: str) -> dict[str, Any]:
        return self.captures[name]["body"]


def request_head(host: str, path: str) -> bytes:
    return (
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {UA}\r\n"
        "Accept-Encoding: gzip, deflate\r\n\r\n"
    ).encode()


def build(directory: Path) -> CaptureLedger:
    """Issue the items and captures of this module's docstring, and seal."""
    made = CaptureLedger(directory, nacl.signing.SigningKey.generate())
    store = BodyStore(directory)
    with Ledger.open(directory, signing_key=made.key) as ledger:
        _items(ledger, made)
        kept = _Kept(store, made)
        alpha_gz = gzip.compress(ALPHA_HTML, mtime=0)
        gz = _capture(
            ledger, made, "gzip", item="A1", url="https://news.example/a", outcome="first",
            captured_at="2026-06-18T05:00:00.125000Z", status=200,
            final_url="https://news.example/a", ip_address="192.0.2.10",
            headers={"content_type": "text/html; charset=utf-8", "content_encoding": "gzip"},
            body_sha256=kept(ALPHA_HTML), body_length=len(ALPHA_HTML),
            request_head_sha256=kept(request_head("news.example", "/a")),
            response_head_sha256=kept(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                b"Content-Encoding: gzip\r\nContent-Length: %d\r\nVary: Accept-Encoding\r\n\r\n"
                % len(alpha_gz)
            ),
            text=_text(kept, "Alpha\nThe first version of the page, café."),
        )  # fmt: skip
        _capture(
            ledger, made, "chunked", item="A2", url="https://news.example/a", outcome="edited",
            captured_at="2026-06-19T05:00:00.250000Z", status=200, previous=gz,
            final_url="https://news.example/a", ip_address="192.0.2.10",
            headers={"content_type": "text/html"},
            body_sha256=kept(ALPHA2_HTML), body_length=len(ALPHA2_HTML),
            request_head_sha256=kept(request_head("news.example", "/a")),
            response_head_sha256=kept(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n"
                b"\r\n"
            ),
            text=_text(kept, "Alpha\nThe second version of the page, café."),
        )  # fmt: skip
        _capture(
            ledger, made, "failed", item="B", url="https://news.example/b", outcome="failed",
            captured_at="2026-06-18T05:00:01.000000Z", error="TimeoutError: took longer than 30 s",
        )  # fmt: skip
        _capture(
            ledger, made, "pdf", item="C", url="https://papers.example/c", outcome="moved",
            captured_at="2026-06-18T05:00:02.500000Z", status=200,
            final_url="https://files.papers.example/c.pdf",
            redirects=["https://papers.example/c"], headers={"content_type": "application/pdf"},
            body_sha256=kept(PDF), body_length=len(PDF),
            response_head_sha256=kept(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: %d\r\n\r\n"
                % len(PDF)
            ),
        )  # fmt: skip
        ledger.seal(run_id="captures")
    return made


def _items(ledger: Ledger, made: CaptureLedger) -> None:
    first = sample_record(1)  # vendor arxiv_cs_ai
    second = {**first, "title": first["title"] + " (edited)", "fingerprint": "ab" * 32}
    other = sample_record(2)  # arxiv_cs_ai, another url
    third = sample_record(3)  # openai_news
    for name, record in (("A1", first), ("B", other), ("C", third)):
        made.items[name] = ledger.issue([new_envelope(record)])[0].axiom_id
    made.items["A2"] = ledger.issue([new_envelope(second, predecessors=[made.items["A1"]])])[
        0
    ].axiom_id


class _Kept:
    def __init__(self, store: BodyStore, made: CaptureLedger) -> None:
        self.store, self.made = store, made

    def __call__(self, data: bytes) -> str:
        digest = self.store.put(data)
        self.made.blobs[digest] = data
        return digest


def _text(kept: _Kept, text: str) -> dict[str, Any]:
    return {"sha256": kept(text.encode()), "length": len(text), "extractor": "trafilatura 2.3.1"}


def _capture(ledger: Ledger, made: CaptureLedger, name: str, *, item: str, **facts: Any) -> str:
    envelope = new_capture_envelope(
        spider="vendor_press",
        vendor=ledger.envelope_of(made.items[item])["body"]["vendor"],
        item=made.items[item],
        run_hash=RUN,
        **facts,
    )
    axiom_id = ledger.issue([envelope])[0].axiom_id
    made.captures[name] = ledger.envelope_of(axiom_id)
    return axiom_id
