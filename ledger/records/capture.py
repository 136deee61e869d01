"""AX.CAPTURE envelopes: a signed record of one capture of one item's page (docs/format.md).

An AX.OBS envelope signs what a feed said about a publication; a capture record signs what the
publication's page itself answered when we fetched it: the URL asked and the one the redirects led
to, the status, the headers that say what the bytes are, the server's address and certificate,
the digest of the body as received (kept in `bodies/` like a feed's), and the digest and length of
the page's main text (trafilatura), which is what tells an edit from boilerplate that changes on
every fetch. Each capture of an item's page names the previous one (`predecessors`), so the
records of one page are a chain; `outcome` says what this capture found against the page's last
version: the first version, the same main text, an edited one, a removal (404, 410) or a move (a
redirect to another page). A failed capture is recorded too; it proves only that we tried.

The envelope has the AX.OBS envelope's top-level keys and is identified and signed the same way
(ledger/envelope.py); `axiom_type` is "AX.CAPTURE" and `body` holds the capture's facts.

A browser capture (docs/browser.md) is a capture record with `body.mode` "browser" and
`body.browser`: the page as the system Chromium rendered it. The record's own fields are the main
document's, its main text is read from the rendered DOM, and `browser` says the rest: the verdict
(`complete`, `partial`, `blocked`, `failed`) and why, every request the page made (a kept manifest
named by `exchanges_sha256`, counted in `requests`, `refused` and `failed`), the full-page
screenshot and the rendered DOM (each kept, named by digest), the browser and driver versions,
the viewport, the user agent, the options, and the plain capture of the same URL made in the
same run (`twin`). Records without `mode` are plain captures and keep their exact shape. Only a
`complete` or `partial` browser capture may start a version: a `blocked` or `failed` one is
outcome `failed`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ledger.envelope import record_envelope
from ledger.exceptions import InvalidRecord

CAPTURE_TYPE = "AX.CAPTURE"
CAPTURE_SCHEMA = "crovia.capture.v1"
CAPTURE_DECISION = "RECORDED"
PAGE_TARGET_PREFIX = "page:"
# What a capture found, against the page's last version (the newest capture with a main text, or
# with a body when the page has no text, such as a PDF):
FIRST = "first"  # the page's first version (a 2xx at the URL asked)
UNCHANGED = "unchanged"  # the same main text as the last version (boilerplate may differ)
EDITED = "edited"  # another main text: a new version
REMOVED = "removed"  # a 404 or 410: the page is gone
MOVED = "moved"  # a 2xx reached by a redirect to another page (another host or path)
FAILED = "failed"  # no usable answer: another status, a timeout, a refusal, a body over the cap
OUTCOMES = (FIRST, UNCHANGED, EDITED, REMOVED, MOVED, FAILED)
# The outcomes that start a new version of the page's main text.
NEW_VERSION = (FIRST, EDITED, MOVED)
GONE_STATUSES = (404, 410)  # the statuses of a removal
# The headers a capture signs (each only when sent, at most HEADER_CHARS characters).
HEADER_NAMES = ("content_type", "content_encoding", "last_modified", "etag")
HEADER_CHARS = 1024
TEXT_KEYS = frozenset(("sha256", "length", "extractor"))
MAX_REDIRECTS = 20
URL_CHARS = 4096
BODY_KEYS = frozenset(
    (
        "schema",
        "spider",
        "vendor",
        "item",
        "url",
        "captured_at",
        "run",
        "outcome",
        "final_url",
        "status",
        "redirects",
        "headers",
        "ip_address",
        "tls_certificate_sha256",
        "body_sha256",
        "body_length",
        "request_head_sha256",
        "response_head_sha256",
        "text",
        "error",
        "mode",  # "browser" for a browser capture (below); absent: plain
        "browser",
    )
)
# The kept blobs a capture record names by digest (beside `text.sha256`): crovia audit checks each.
KEPT_DIGESTS = ("body_sha256", "request_head_sha256", "response_head_sha256")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_AXIOM_ID = re.compile(r"axm_[0-9a-f]{64}")
_MICRO = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})\.[0-9]{6}Z")


def new_capture_envelope(
    *,
    spider: str,
    vendor: str,
    item: str,
    url: str,
    captured_at: str,
    run_hash: str,
    outcome: str,
    previous: str = "",
    final_url: str = "",
    status: int | None = None,
    redirects: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
    ip_address: str = "",
    tls_certificate_sha256: str = "",
    body_sha256: str = "",
    body_length: int | None = None,
    request_head_sha256: str = "",
    response_head_sha256: str = "",
    text: Mapping[str, Any] | None = None,
    error: str = "",
    mode: str = "",
    browser: Mapping[str, Any] | None = None,
    issued_at: str | None = None,
) -> dict[str, Any]:
    """Build the UNSIGNED AX.CAPTURE envelope of one capture of the page `url` of the item whose
    AX.OBS envelope is `item` (its axiom_id), chained to the `previous` capture record of the
    same page (its axiom_id, "" for the first). Empty values are left out (absent, never null).
    Raises InvalidRecord for a malformed field (capture_problem)."""
    moment = _MICRO.fullmatch(captured_at) if type(captured_at) is str else None
    if moment is None:
        raise InvalidRecord(f"captured_at {captured_at!r} is not UTC with microseconds and Z")
    body: dict[str, Any] = {
        "schema": CAPTURE_SCHEMA,
        "spider": spider,
        "vendor": vendor,
        "item": item,
        "url": url,
        "captured_at": captured_at,
        "run": run_hash,
        "outcome": outcome,
    }
    optional: dict[str, Any] = {
        "final_url": final_url,
        "status": status,
        "redirects": list(redirects),
        "headers": {k: v for k, v in (headers or {}).items() if v},
        "ip_address": ip_address,
        "tls_certificate_sha256": tls_certificate_sha256,
        "body_sha256": body_sha256,
        "body_length": body_length,
        "request_head_sha256": request_head_sha256,
        "response_head_sha256": response_head_sha256,
        "text": dict(text or {}),
        "error": error,
        "mode": mode,
        "browser": dict(browser or {}),
    }
    body.update({k: v for k, v in optional.items() if v or (k == "body_length" and v == 0)})
    if body.get("body_length") is not None and "body_sha256" not in body:
        del body["body_length"]
    if problem := capture_problem(body):
        raise InvalidRecord(problem)
    if previous and not _AXIOM_ID.fullmatch(previous):
        raise InvalidRecord(f"previous capture {previous!r} is not an axiom_id (axm_ + 64 hex)")
    return record_envelope(
        CAPTURE_TYPE,
        body=body,
        decision=CAPTURE_DECISION,
        issued_at=issued_at,
        notes=_notes(url, item, spider, outcome, body.get("browser")),
        obj={"captured_by": f"crovia.spider.{spider}", "primary_source_url": url},
        subject={
            "observed_at": moment.group(1) + "Z",
            "source_collector": f"spider:{spider}",
            "target_id": PAGE_TARGET_PREFIX + url,
        },
        predecessors=[previous] if previous else [],
    )


def _notes(url: str, item: str, spider: str, outcome: str, browser: Any) -> str:
    if browser is None:
        return f"Capture of {url} for item {item} by spider {spider}: {outcome}"
    verdict = browser.get("verdict")
    return f"Browser capture of {url} for item {item} by spider {spider}: {outcome} ({verdict})"


def is_capture_record(envelope: Any) -> bool:
    """True for an AX.CAPTURE envelope (by its axiom_type; its shape is checked elsewhere)."""
    mapping = type(envelope) is dict or isinstance(envelope, Mapping)
    return mapping and envelope.get("axiom_type") == CAPTURE_TYPE


def capture_problem(body: Any) -> str:
    """What is wrong with an AX.CAPTURE body ("" when nothing is): the keys (BODY_KEYS, the first
    eight required), string fields as strings, `item` an axiom_id, the outcome, `status` and
    `body_length` ints, `redirects` a list of at most MAX_REDIRECTS strings, `headers` an object
    of HEADER_NAMES strings, each digest 64 lowercase hex, `text` `{sha256, length, extractor}`;
    and the facts that go together: a body has its digest, length, status and final URL; a
    response (a status) has its final URL; `failed` has an error; the other outcomes a status:
    404 or 410 for `removed`, a 2xx for the others, and `moved` a final URL other than `url`.
    `redirects` and `headers`, when present, are not empty. Then a browser capture's `mode` and
    `browser` (browser_problem)."""
    if type(body) is not dict:
        return "a capture record's body is a JSON object"
    if body.get("schema") != CAPTURE_SCHEMA:
        return f"body.schema is not {CAPTURE_SCHEMA!r}"
    if not body.keys() <= BODY_KEYS:
        return f"body has keys a capture record does not: {sorted(body.keys() - BODY_KEYS)}"
    for name in ("spider", "vendor", "item", "url", "captured_at", "run", "outcome"):
        if type(body.get(name)) is not str or not body[name]:
            return f"body.{name} is not a non-empty string"
    if not _AXIOM_ID.fullmatch(body["item"]):
        return "body.item is not an axiom_id (axm_ and 64 lowercase hex)"
    if not _MICRO.fullmatch(body["captured_at"]):
        return "body.captured_at is not UTC with microseconds and Z"
    if body["outcome"] not in OUTCOMES:
        return f"body.outcome is not one of {', '.join(OUTCOMES)}"
    for name in ("url", "final_url"):
        if name in body and (type(body[name]) is not str or not 0 < len(body[name]) <= URL_CHARS):
            return f"body.{name} is not a string of 1 to {URL_CHARS} characters"
    for name in ("ip_address", "error"):
        if name in body and (type(body[name]) is not str or not body[name]):
            return f"body.{name} is not a non-empty string"
    for name in ("status", "body_length"):
        if name in body and (type(body[name]) is not int or body[name] < 0):
            return f"body.{name} is not an int of at least 0"
    for name in ("tls_certificate_sha256", *KEPT_DIGESTS):
        if name in body and (type(body[name]) is not str or not _HEX64.fullmatch(body[name])):
            return f"body.{name} is not 64 lowercase hex"
    redirects = body.get("redirects", ["(absent)"])
    if (
        type(redirects) is not list
        or not 0 < len(redirects) <= MAX_REDIRECTS
        or not all(type(u) is str and 0 < len(u) <= URL_CHARS for u in redirects)
    ):
        return f"body.redirects is not a list of 1 to {MAX_REDIRECTS} URLs"
    headers = body.get("headers", {"content_type": "(absent)"})
    if type(headers) is not dict or not headers or not headers.keys() <= set(HEADER_NAMES):
        return f"body.headers is not an object of {', '.join(HEADER_NAMES)}"
    if not all(type(v) is str and 0 < len(v) <= HEADER_CHARS for v in headers.values()):
        return f"body.headers holds a value that is not a string of 1 to {HEADER_CHARS} characters"
    if "text" in body:
        text = body["text"]
        if type(text) is not dict or text.keys() != TEXT_KEYS:
            return "body.text is not {sha256, length, extractor}"
        if type(text["sha256"]) is not str or not _HEX64.fullmatch(text["sha256"]):
            return "body.text.sha256 is not 64 lowercase hex"
        if type(text["length"]) is not int or text["length"] < 0:
            return "body.text.length is not an int of at least 0"
        if type(text["extractor"]) is not str or not text["extractor"]:
            return "body.text.extractor is not a non-empty string"
    if "body_sha256" in body and not {"body_length", "status", "final_url"} <= body.keys():
        return "body.body_sha256 names a body without its body_length, status and final_url"
    if ("body_length" in body or "text" in body) and "body_sha256" not in body:
        return "body.body_length and body.text are those of a kept body (body_sha256)"
    if "status" in body and "final_url" not in body:
        return "body.status is a response's: its final_url is missing"
    if body["outcome"] == FAILED and "error" not in body:
        return "a failed capture says why (body.error)"
    if body["outcome"] != FAILED and "status" not in body:
        return f"a capture {body['outcome']} names the response's status"
    # What each outcome says of the response (docs/format.md): a verifier reports the outcome,
    # so it must be the one the facts signed beside it allow.
    if body["outcome"] == REMOVED and body["status"] not in GONE_STATUSES:
        return "a capture removed has the status 404 or 410"
    if body["outcome"] in (*NEW_VERSION, UNCHANGED) and not 200 <= body["status"] < 300:
        return f"a capture {body['outcome']} has a 2xx status"
    if body["outcome"] == MOVED and body["final_url"] == body["url"]:
        return "a capture moved ends at another URL than body.url"
    # A browser capture (below): its mode, its facts, and only a complete or
    # partial one a version of the page.
    return browser_problem(body, body["outcome"] == FAILED)


def capture_envelope_problem(envelope: Mapping[str, Any]) -> str:
    """What ties a capture record's envelope to its body ("" when it holds): the page reported
    from `object` and `subject` is the body's `url`, and the time observed its `captured_at`
    cut to seconds. Checked after capture_problem (the body well-formed)."""
    body, url = envelope["body"], envelope["body"]["url"]
    if envelope["object"].get("primary_source_url") != url:
        return "envelope.object.primary_source_url is not body.url"
    if envelope["subject"].get("target_id") != PAGE_TARGET_PREFIX + url:
        return "envelope.subject.target_id is not 'page:' and body.url"
    if envelope["subject"].get("observed_at") != body["captured_at"][:19] + "Z":
        return "envelope.subject.observed_at is not body.captured_at cut to seconds"
    return ""


def describe_capture(envelope: Mapping[str, Any]) -> str:
    """One line saying what a capture record vouches for: "page URL of item A captured at T:
    edited, HTTP 200 from FINAL, body H (N bytes), main text S (L characters)"."""
    body = envelope.get("body") or {}
    facts = [str(body.get("outcome"))]
    if "status" in body:
        facts.append(f"HTTP {body['status']}")
    if body.get("final_url") and body.get("final_url") != body.get("url"):
        facts.append(f"at {body['final_url']}")
    if "body_sha256" in body:
        facts.append(f"body {body['body_sha256']} ({body.get('body_length')} bytes)")
    text = body.get("text")
    if isinstance(text, Mapping):
        facts.append(f"main text {text.get('sha256')} ({text.get('length')} characters)")
    elif "body_sha256" in body:
        facts.append("no main text")
    if body.get("ip_address"):
        facts.append(f"server {body['ip_address']}")
    if body.get("tls_certificate_sha256"):
        facts.append(f"certificate sha256 {body['tls_certificate_sha256']}")
    if body.get("error"):
        facts.append(f"error: {body['error']}")
    if body.get("mode") == BROWSER_MODE and isinstance(body.get("browser"), Mapping):
        facts.extend(describe_browser(body["browser"]))
    return (
        f"page {body.get('url')} of item {body.get('item')} ({body.get('vendor')}) captured at"
        f" {body.get('captured_at')}: " + ", ".join(facts)
    )


def describe_browser(browser: Mapping[str, Any]) -> list[str]:
    """What a browser capture adds to describe_capture's line: its verdict and why, what it
    loaded, what it kept, the browser, and its twin."""
    facts = [f"browser capture {browser.get('verdict')}"]
    reasons = browser.get("reasons")
    if isinstance(reasons, list) and reasons:
        facts.append("because " + "; ".join(str(r) for r in reasons))
    facts.append(
        f"{browser.get('requests')} requests ({browser.get('refused')} refused,"
        f" {browser.get('failed')} failed), listed in {browser.get('exchanges_sha256')}"
    )
    for name, label in (("screenshot", "screenshot"), ("dom", "rendered DOM")):
        held = browser.get(name)
        if isinstance(held, Mapping):
            size = (
                f"{held.get('width')}x{held.get('height')} px"
                if name == "screenshot"
                else f"{held.get('length')} bytes"
            )
            facts.append(f"{label} {held.get('sha256')} ({size})")
    software, viewport = browser.get("software"), browser.get("viewport")
    if isinstance(software, Mapping) and isinstance(viewport, Mapping):
        facts.append(
            f"by {software.get('browser')} ({software.get('driver')}) at"
            f" {viewport.get('width')}x{viewport.get('height')}"
        )
    twin = browser.get("twin")
    facts.append(f"twin {twin}" if twin else "no twin")
    return facts


# -- browser captures (`body.mode` "browser") ---------------------------------------------

BROWSER_MODE = "browser"
# A browser capture's verdict (`failed` is FAILED, the outcome's word too).
COMPLETE, PARTIAL, BLOCKED = "complete", "partial", "blocked"
VERDICTS = (COMPLETE, PARTIAL, BLOCKED, FAILED)
# The verdicts whose capture may be a version of the page (first, unchanged, edited, moved).
USABLE_VERDICTS = (COMPLETE, PARTIAL)
BROWSER_KEYS = frozenset(
    (
        "verdict",
        "reasons",
        "twin",
        "exchanges_sha256",
        "requests",
        "refused",
        "failed",
        "screenshot",
        "dom",
        "software",
        "viewport",
        "user_agent",
        "options",
    )
)
REQUIRED = ("verdict", "exchanges_sha256", "requests", "refused", "failed")
REQUIRED += ("software", "viewport", "user_agent", "options")
SCREENSHOT_KEYS = frozenset(("sha256", "width", "height"))
DOM_KEYS = frozenset(("sha256", "length"))
SOFTWARE_KEYS = frozenset(("browser", "driver"))
VIEWPORT_KEYS = frozenset(("width", "height"))
MAX_REASONS = 20
REASON_CHARS = 1024
NAME_CHARS = 1024  # a user agent, a software version, an option's value
MAX_OPTIONS = 20
MAX_PIXELS = 1_000_000  # a viewport's or a screenshot's side
# The kept blobs a browser capture names by digest, beside those of every capture.
BROWSER_DIGESTS = ("exchanges_sha256", "screenshot", "dom")
_OPTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _int(value: Any, low: int, high: int | None = None) -> bool:
    return type(value) is int and value >= low and (high is None or value <= high)


def _text(value: Any, most: int) -> bool:
    return type(value) is str and 0 < len(value) <= most


def browser_problem(body: dict[str, Any], outcome_failed: bool) -> str:
    """What is wrong with a capture body's `mode` and `browser` ("" when nothing is). A body
    without `mode` must have no `browser` (a plain capture); with it, `mode` is "browser" and
    `browser` holds the keys of BROWSER_KEYS, REQUIRED always, each well-formed; a `complete`
    verdict gives no reasons, the others 1 to MAX_REASONS; `refused` and `failed` count among
    `requests`; and a `blocked` or `failed` capture has the outcome `failed`
    (`outcome_failed`)."""
    if "mode" not in body:
        return (
            "body.browser is a browser capture's: body.mode is missing" if "browser" in body else ""
        )
    if body["mode"] != BROWSER_MODE:
        return f"body.mode is not {BROWSER_MODE!r}"
    browser = body.get("browser")
    if type(browser) is not dict:
        return "body.browser is not an object (a browser capture's)"
    if not browser.keys() <= BROWSER_KEYS:
        unknown = sorted(browser.keys() - BROWSER_KEYS)
        return f"body.browser has keys a browser capture does not: {unknown}"
    for name in REQUIRED:
        if name not in browser:
            return f"body.browser.{name} is missing"
    return _facts_problem(browser) or _verdict_problem(browser, outcome_failed)


def _facts_problem(browser: dict[str, Any]) -> str:
    if browser["verdict"] not in VERDICTS:
        return f"body.browser.verdict is not one of {', '.join(VERDICTS)}"
    if type(browser["exchanges_sha256"]) is not str or not _HEX64.fullmatch(
        browser["exchanges_sha256"]
    ):
        return "body.browser.exchanges_sha256 is not 64 lowercase hex"
    for name in ("requests", "refused", "failed"):
        if not _int(browser[name], 0):
            return f"body.browser.{name} is not an int of at least 0"
    if browser["refused"] + browser["failed"] > browser["requests"]:
        return "body.browser.refused and failed count more than its requests"
    if "twin" in browser and (
        type(browser["twin"]) is not str or not _AXIOM_ID.fullmatch(browser["twin"])
    ):
        return "body.browser.twin is not an axiom_id (axm_ and 64 lowercase hex)"
    if "reasons" in browser:
        reasons = browser["reasons"]
        if type(reasons) is not list or not 0 < len(reasons) <= MAX_REASONS:
            return f"body.browser.reasons is not a list of 1 to {MAX_REASONS} strings"
        if not all(_text(r, REASON_CHARS) for r in reasons):
            return f"body.browser.reasons holds one that is not 1 to {REASON_CHARS} characters"
    return _objects_problem(browser)


def _objects_problem(browser: dict[str, Any]) -> str:
    shot = browser.get("screenshot", {"sha256": "0" * 64, "width": 1, "height": 1})
    if type(shot) is not dict or shot.keys() != SCREENSHOT_KEYS:
        return "body.browser.screenshot is not {sha256, width, height}"
    if type(shot["sha256"]) is not str or not _HEX64.fullmatch(shot["sha256"]):
        return "body.browser.screenshot.sha256 is not 64 lowercase hex"
    if not (_int(shot["width"], 1, MAX_PIXELS) and _int(shot["height"], 1, MAX_PIXELS)):
        return f"body.browser.screenshot width and height are not ints of 1 to {MAX_PIXELS}"
    dom = browser.get("dom", {"sha256": "0" * 64, "length": 0})
    if type(dom) is not dict or dom.keys() != DOM_KEYS:
        return "body.browser.dom is not {sha256, length}"
    if (
        type(dom["sha256"]) is not str
        or not _HEX64.fullmatch(dom["sha256"])
        or not _int(dom["length"], 0)
    ):
        return "body.browser.dom is not a 64 lowercase hex sha256 and an int length of at least 0"
    software = browser["software"]
    if type(software) is not dict or software.keys() != SOFTWARE_KEYS:
        return "body.browser.software is not {browser, driver}"
    if not all(_text(v, NAME_CHARS) for v in software.values()):
        return f"body.browser.software holds one that is not 1 to {NAME_CHARS} characters"
    viewport = browser["viewport"]
    if type(viewport) is not dict or viewport.keys() != VIEWPORT_KEYS:
        return "body.browser.viewport is not {width, height}"
    if not all(_int(v, 1, MAX_PIXELS) for v in viewport.values()):
        return f"body.browser.viewport width and height are not ints of 1 to {MAX_PIXELS}"
    if not _text(browser["user_agent"], NAME_CHARS):
        return f"body.browser.user_agent is not a string of 1 to {NAME_CHARS} characters"
    options = browser["options"]
    if type(options) is not dict or len(options) > MAX_OPTIONS:
        return f"body.browser.options is not an object of at most {MAX_OPTIONS} options"
    for name, value in options.items():
        if not _OPTION_NAME.fullmatch(name):
            return "body.browser.options has a name that is not lower-case letters, digits and _"
        if not (type(value) in (bool, int) or _text(value, NAME_CHARS)):
            return (
                f"body.browser.options.{name} is not a boolean, an int or a string of 1 to"
                f" {NAME_CHARS} characters"
            )
    return ""


def _verdict_problem(browser: dict[str, Any], outcome_failed: bool) -> str:
    verdict = browser["verdict"]
    if verdict == COMPLETE and "reasons" in browser:
        return "a complete browser capture gives no reasons"
    if verdict != COMPLETE and "reasons" not in browser:
        return f"a {verdict} browser capture says why (body.browser.reasons)"
    if verdict not in USABLE_VERDICTS and not outcome_failed:
        return f"a {verdict} browser capture has the outcome failed"
    return ""


def browser_blobs(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, digest) of every blob a browser capture's body names: the manifest of its
    exchanges, the screenshot and the DOM ([] for a plain capture or a malformed one)."""
    browser = body.get("browser") if body.get("mode") == BROWSER_MODE else None
    if type(browser) is not dict:
        return []
    out = []
    if type(browser.get("exchanges_sha256")) is str:
        out.append(("browser.exchanges_sha256", browser["exchanges_sha256"]))
    for name in ("screenshot", "dom"):
        held = browser.get(name)
        if type(held) is dict and type(held.get("sha256")) is str:
            out.append((f"browser.{name}", held["sha256"]))
    return out


# The digests an exchange of a browser capture's manifest names, each a kept blob.
EXCHANGE_DIGESTS = (
    "request_head_sha256",
    "request_body_sha256",
    "response_head_sha256",
    "body_sha256",
)


def exchange_blobs(store: Any, manifest: str) -> list[tuple[int, str, str]]:
    """(index, name, digest) of every blob the manifest `manifest` (a digest, read from `store`,
    a ledger.store.BodyStore, which verifies it) names in its exchanges. Raises BodyMismatch for
    a manifest that is not kept whole, ValueError for one that is no manifest."""
    data = json.loads(store.get(manifest))
    exchanges = data.get("exchanges") if isinstance(data, dict) else None
    if not isinstance(exchanges, list):
        raise ValueError(f"browser exchanges {manifest} hold no list of exchanges")
    return [
        (index, name, exchange[name])
        for index, exchange in enumerate(exchanges)
        if isinstance(exchange, dict)
        for name in EXCHANGE_DIGESTS
        if isinstance(exchange.get(name), str)
    ]
