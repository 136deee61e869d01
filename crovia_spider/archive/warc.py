"""WARC 1.1 of capture records, written by warcio (docs/archives.md, "What the WARC holds").

One `warcinfo` record, then per capture record, in leaf order:
- a capture with a response and its kept response head: a `response` record (the head rewritten
  by `heads.replay_head`, the payload the kept body, byte for byte) and, when its request head
  is kept, the `request` record (the kept head as warcio serialises it, a byte no header may
  hold escaped by `heads.escape_head`), `WARC-Concurrent-To` it;
- a browser capture, then, every further exchange of its page that got an answer, as a request
  and response pair, and resource records of its exchanges' manifest, screenshot and rendered DOM
  (browser.py);
- a capture without one (a failure before any answer, or a record that kept no head): a
  `metadata` record of `application/warc-fields` saying what the capture found. Nothing replays
  from it; it keeps the capture's axiom_id in the archive.

Each record names its capture record (`WARC-Crovia-Axiom-Id`) and the kept blobs it was built
from, and carries SHA-256 digests: `WARC-Payload-Digest` of a response is then the body's
`body_sha256`, in base32. Every blob is read through BodyStore, which refuses bytes that are not
the signed ones (BodyMismatch, naming the record and the blob).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any, BinaryIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.utils import Digester
from warcio.warcwriter import WARCWriter

from crovia_spider.archive.browser import is_browser_capture, write_browser_records
from crovia_spider.archive.heads import escape_head, replay_head
from crovia_spider.archive.pages import CapturedPage, page_title
from crovia_spider.exceptions import ExportRefused
from ledger.exceptions import BodyMismatch

WARC_VERSION = "1.1"
DIGEST = "sha256"
# Our WARC header fields (WARC 1.1 allows extension fields): the record, and the kept blobs.
AXIOM_ID = "WARC-Crovia-Axiom-Id"
BODY_SHA256 = "WARC-Crovia-Body-Sha256"
REQUEST_HEAD_SHA256 = "WARC-Crovia-Request-Head-Sha256"
RESPONSE_HEAD_SHA256 = "WARC-Crovia-Response-Head-Sha256"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Sha256WARCWriter(WARCWriter):
    """warcio's WARC writer with SHA-256 block and payload digests (warcio's default is SHA-1;
    `_create_digester` is the one place it makes its digesters, and `warcio check` verifies any
    algorithm hashlib knows)."""

    @staticmethod
    def _create_digester() -> Digester:
        return Digester(DIGEST)


@dataclass(frozen=True)
class WarcWritten:
    """What `write_warc` wrote: its record count, the pages (captures with a response), and the
    capture records written as metadata records."""

    records: int
    pages: tuple[CapturedPage, ...]
    without_response: tuple[str, ...]


def write_warc(
    out: BinaryIO,
    captures: Iterable[Mapping[str, Any]],
    store: Any,
    *,
    filename: str,
    info: Mapping[str, str],
    gzip: bool = True,
) -> WarcWritten:
    """Write the WARC of `captures` (full AX.CAPTURE envelopes) to `out`, each blob read from
    `store` (a ledger.store.BodyStore); `info` are the warcinfo record's fields. Raises
    BodyMismatch for a blob missing or not its digest's bytes, ExportRefused for a record that
    cannot be a WARC record; `out` may then hold part of the WARC."""
    writer = Sha256WARCWriter(out, gzip=gzip, warc_version=WARC_VERSION)
    writer.write_record(writer.create_warcinfo_record(filename, dict(info)))
    records, pages, without = 1, [], []
    for envelope in captures:
        body = envelope["body"]
        if "status" in body and "response_head_sha256" in body:
            page, written = _write_exchange(writer, envelope, store)
            pages.append(page)
            records += written
            if is_browser_capture(body):  # every further exchange, the screenshot and the DOM
                records += write_browser_records(
                    writer, envelope, store, _write_exchange, _record_fields
                )
        else:
            writer.write_record(_metadata(writer, envelope))
            without.append(envelope["axiom_id"])
            records += 1
    return WarcWritten(records, tuple(pages), tuple(without))


def _write_exchange(writer: WARCWriter, envelope: Mapping[str, Any], store: Any) -> tuple:
    """The response record (and the request record when its head is kept) of one capture."""
    body, axiom_id = envelope["body"], envelope["axiom_id"]
    where = f"capture record {axiom_id}"
    payload = _blob(store, body, "body_sha256", where) if "body_sha256" in body else b""
    head = replay_head(_blob(store, body, "response_head_sha256", where), len(payload), where)
    url = _field(body["final_url"], "final_url", where)
    fields = _record_fields("response", url, body, where)
    if body.get("ip_address"):
        fields["WARC-IP-Address"] = _field(body["ip_address"], "ip_address", where)
    fields.update({AXIOM_ID: axiom_id, RESPONSE_HEAD_SHA256: body["response_head_sha256"]})
    if "body_sha256" in body:
        fields[BODY_SHA256] = body["body_sha256"]
    response = writer.create_warc_record(
        url,
        "response",
        payload=BytesIO(payload),
        length=len(payload),
        http_headers=head,
        warc_headers_dict=fields,
    )
    page = CapturedPage(
        axiom_id, url, body["captured_at"], page_title(payload, head.get_header("Content-Type", ""))
    )
    if "request_head_sha256" not in body:
        writer.write_record(response)
        return page, 1
    sent = escape_head(_blob(store, body, "request_head_sha256", where), where, "request")
    request = writer.create_warc_record(
        url,
        "request",
        payload=BytesIO(sent),
        length=len(sent),
        warc_headers_dict={
            **_record_fields("request", url, body, where),
            AXIOM_ID: axiom_id,
            REQUEST_HEAD_SHA256: body["request_head_sha256"],
        },
    )
    writer.write_request_response_pair(request, response)
    return page, 2


def _metadata(writer: WARCWriter, envelope: Mapping[str, Any]) -> Any:
    """The metadata record of a capture without a response to replay: its outcome, status and
    error as WARC named fields (warcio serialises them as it does HTTP headers)."""
    body, axiom_id = envelope["body"], envelope["axiom_id"]
    where = f"capture record {axiom_id}"
    facts = [("outcome", body["outcome"])]
    if "status" in body:
        facts += [("status", str(body["status"])), ("note", "no response head was kept")]
    if body.get("error"):
        facts.append(("error", _one_line(str(body["error"]))))
    fields = StatusAndHeaders("", facts, protocol="").to_bytes()
    url = _field(body["url"], "url", where)
    return writer.create_warc_record(
        url,
        "metadata",
        payload=BytesIO(fields),
        length=len(fields),
        warc_content_type="application/warc-fields",
        warc_headers_dict={**_record_fields("metadata", url, body, where), AXIOM_ID: axiom_id},
    )


def _record_fields(kind: str, url: str, body: Mapping[str, Any], where: str) -> dict[str, str]:
    """The standard fields first, in the order WARC 1.1's examples give them (warcio adds
    WARC-Record-ID, the length and the digests)."""
    return {
        "WARC-Type": kind,
        "WARC-Target-URI": url,
        "WARC-Date": _field(body["captured_at"], "captured_at", where),
    }


def _blob(store: Any, body: Mapping[str, Any], name: str, where: str) -> bytes:
    """The kept bytes a capture record names in `name`, verified against that digest."""
    try:
        return store.get(body[name])
    except BodyMismatch as exc:
        raise BodyMismatch(
            f"{where} ({name}): kept {exc.args[0]}", expected=exc.expected, computed=exc.computed
        ) from None


def _field(value: Any, name: str, where: str) -> str:
    """A WARC header value from a signed record: one line of printable text, or ExportRefused
    (a line break in it would forge WARC headers)."""
    text = str(value)
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise ExportRefused(f"{where}: body.{name} holds a control character: not a WARC field")
    return text


def _one_line(text: str) -> str:
    """`text` as one line of a WARC named field: runs of white space one space, and any other
    control character (a NUL a server's message carried) written %XX."""
    return _CONTROL.sub(lambda m: f"%{ord(m.group()):02X}", " ".join(text.split()))


def warcinfo(description: str) -> dict[str, str]:
    """The warcinfo fields of an export: who wrote it, in which format, and what it holds."""
    from importlib.metadata import version

    from crovia_spider import __version__

    return {
        "software": f"crovia-spider {__version__} (warcio {version('warcio')})",
        "format": f"WARC File Format {WARC_VERSION}",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        "description": description,
    }
