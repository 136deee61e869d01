"""The WARC records of a browser capture beyond its main document (docs/archives.md).

A browser capture's main document is written as any capture's (warc.py: a request and a
response record from its kept heads and body). Then, from the kept manifest of its exchanges
(`browser.exchanges_sha256`, docs/format.md "Browser captures"), every other exchange that got
an answer is one more request and response pair, rebuilt from its own kept heads and body by the
same code, so a replayer serves the page's scripts, styles, images and API answers as the browser
got them. An exchange refused or without an answer has no record of its own: the manifest lists
it, and the manifest is in the WARC too. Three resource records follow, each naming the capture
record and the blob: the manifest (`urn:crovia:exchanges:<URL>`, application/json), the full-page
screenshot (`urn:view:<URL>`, image/png, the name Browsertrix gives a page's screenshot) and the
rendered DOM (`urn:dom:<URL>`, text/html). Every blob is read through BodyStore, which refuses
bytes that are not the signed ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from io import BytesIO
from typing import Any

from crovia_spider.exceptions import ExportRefused

EXCHANGES_URN = "urn:crovia:exchanges:"
SCREENSHOT_URN = "urn:view:"
DOM_URN = "urn:dom:"
BLOB_SHA256 = "WARC-Crovia-Blob-Sha256"


def is_browser_capture(body: Mapping[str, Any]) -> bool:
    return body.get("mode") == "browser" and isinstance(body.get("browser"), Mapping)


def write_browser_records(
    writer: Any,
    envelope: Mapping[str, Any],
    store: Any,
    write_exchange: Callable[[Any, Mapping[str, Any], Any], tuple[Any, int]],
    record_fields: Callable[[str, str, Mapping[str, Any], str], dict[str, str]],
) -> int:
    """Write the further records of the browser capture `envelope` (see the module) with
    warc.py's `write_exchange` and `record_fields`; how many were written. Raises BodyMismatch
    for a blob not kept whole, ExportRefused for a manifest that is none."""
    body, axiom_id = envelope["body"], envelope["axiom_id"]
    browser = body["browser"]
    where = f"capture record {axiom_id}"
    manifest = _get(store, browser["exchanges_sha256"], where, "browser.exchanges_sha256")
    written = 0
    for exchange in _exchanges(manifest, where)[_main_index(body, manifest, where) + 1 :]:
        if not _answered(exchange):
            continue
        facts = {
            "final_url": exchange["url"],
            "captured_at": body["captured_at"],
            "status": exchange["status"],
            "response_head_sha256": exchange["response_head_sha256"],
            "body_sha256": exchange["body_sha256"],
        }
        for name in ("request_head_sha256", "ip_address"):
            if isinstance(exchange.get(name), str):
                facts[name] = exchange[name]
        written += write_exchange(writer, {"axiom_id": axiom_id, "body": facts}, store)[1]
    url = body["final_url"]
    resources = [(EXCHANGES_URN, "application/json", browser["exchanges_sha256"], manifest)]
    if isinstance(browser.get("screenshot"), Mapping):
        digest = browser["screenshot"]["sha256"]
        resources.append((SCREENSHOT_URN, "image/png", digest, None))
    if isinstance(browser.get("dom"), Mapping):
        digest = browser["dom"]["sha256"]
        resources.append((DOM_URN, "text/html; charset=utf-8", digest, None))
    for prefix, content_type, digest, data in resources:
        data = data if data is not None else _get(store, digest, where, prefix)
        uri = prefix + url
        fields = {**record_fields("resource", uri, body, where), "WARC-Crovia-Axiom-Id": axiom_id}
        fields[BLOB_SHA256] = digest
        writer.write_record(
            writer.create_warc_record(
                uri,
                "resource",
                payload=BytesIO(data),
                length=len(data),
                warc_content_type=content_type,
                warc_headers_dict=fields,
            )
        )
        written += 1
    return written


def _answered(exchange: Any) -> bool:
    """An exchange with an answer to replay: its status, kept response head and body."""
    return (
        isinstance(exchange, Mapping)
        and isinstance(exchange.get("url"), str)
        and isinstance(exchange.get("status"), int)
        and isinstance(exchange.get("response_head_sha256"), str)
        and isinstance(exchange.get("body_sha256"), str)
    )


def _exchanges(manifest: bytes, where: str) -> list[Any]:
    try:
        data = json.loads(manifest)
    except ValueError as exc:
        raise ExportRefused(f"{where}: its exchanges' manifest is no JSON: {exc}") from None
    exchanges = data.get("exchanges") if isinstance(data, dict) else None
    if not isinstance(exchanges, list):
        raise ExportRefused(f"{where}: its exchanges' manifest holds no list of exchanges")
    return exchanges


def _main_index(body: Mapping[str, Any], manifest: bytes, where: str) -> int:
    """The main document's place in the manifest (the redirects before it and it are written
    as the capture's own exchange); -1 when the manifest does not hold it (every answered
    exchange is written then)."""
    for index, exchange in enumerate(_exchanges(manifest, where)):
        if (
            isinstance(exchange, Mapping)
            and exchange.get("body_sha256") == body.get("body_sha256")
            and exchange.get("response_head_sha256") == body.get("response_head_sha256")
        ):
            return index
    return -1


def _get(store: Any, digest: str, where: str, name: str) -> bytes:
    from ledger.exceptions import BodyMismatch

    try:
        return store.get(digest)
    except BodyMismatch as exc:
        raise BodyMismatch(
            f"{where} ({name}): kept {exc.args[0]}", expected=exc.expected, computed=exc.computed
        ) from None
