"""The browser part of a capture record: `body.mode` "browser" and `body.browser` (docs/format.md).

A plain capture signs one HTTP GET of a page. A browser capture signs the page as a browser
rendered it: the main document is in the record's usual fields (`final_url`, `status`, heads,
`body_sha256`, `ip_address`, `tls_certificate_sha256`), its main text is read from the rendered
DOM, and `browser` says the rest: the verdict (`complete`, `partial`, `blocked`, `failed`) and
why, every request the page made (a kept manifest named by `exchanges_sha256`, counted in
`requests`, `refused` and `failed`), the full-page screenshot and the rendered DOM (each kept,
named by digest), the browser and driver versions, the viewport, the user agent, the options,
and the plain capture of the same URL made in the same run (`twin`), when there was one.

Records without `mode` are plain captures and keep their exact shape, so every record issued
before browser captures existed is checked as before. Only `complete` and `partial` may start a
version: a `blocked` or `failed` capture is outcome `failed`.
"""

from __future__ import annotations

import re
from typing import Any

BROWSER_MODE = "browser"
COMPLETE, PARTIAL, BLOCKED, FAILED = "complete", "partial", "blocked", "failed"
VERDICTS = (COMPLETE, PARTIAL, BLOCKED, FAILED)
# The verdicts whose capture may be a version of the page (first, unchanged, edited, moved).
USABLE = (COMPLETE, PARTIAL)
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
_HEX64 = re.compile(r"[0-9a-f]{64}")
_AXIOM_ID = re.compile(r"axm_[0-9a-f]{64}")
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
    if verdict not in USABLE and not outcome_failed:
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
    import json

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
