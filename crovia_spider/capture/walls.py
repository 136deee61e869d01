"""Bot walls: a page answered in place of the vendor's, never signed as the vendor's content.

A wall is a challenge or a captcha a site (or its CDN) serves to a client it does not trust. It
is recognised on the main document alone, by evidence a reader can check against the kept
response: Cloudflare's `cf-mitigated: challenge` header (it marks a challenge whatever the
status), or a status that refuses (403, 429, 503) answered by a page that is a challenge: its
title is one a wall uses ("Just a moment...", "Attention Required!"), or its markup loads a
challenge or captcha (Cloudflare's challenge platform, Turnstile, reCAPTCHA, hCaptcha, DataDome,
PerimeterX, Imperva's Incapsula, AWS WAF's captcha). A 403 page without such marks is an
ordinary refusal, not a wall: the capture is failed for its status as any plain capture would be.

`wall_evidence` returns the evidence found, each a short phrase; none means no wall. Reading is
bounded: the title and markers are looked for in the first WALL_BYTES of the body only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

WALL_STATUSES = (403, 429, 503)
WALL_BYTES = 256 * 1024
TITLE_CHARS = 200
# Titles walls use, lower case, whitespace collapsed; a title starting with one of them counts.
WALL_TITLES = (
    "just a moment",
    "attention required",
    "please wait while we verify",
    "checking your browser",
    "verifying you are human",
    "access denied",
    "security check",
    "are you a robot",
    "human verification",
    "ddos-guard",
)
# Markup that loads a challenge or a captcha (lower case), and what it names.
WALL_MARKERS = (
    ("/cdn-cgi/challenge-platform/", "Cloudflare's challenge platform"),
    ("challenges.cloudflare.com", "Cloudflare Turnstile"),
    ("cf-turnstile", "Cloudflare Turnstile"),
    ("cf_chl_opt", "a Cloudflare challenge"),
    ("g-recaptcha", "reCAPTCHA"),
    ("google.com/recaptcha", "reCAPTCHA"),
    ("h-captcha", "hCaptcha"),
    ("hcaptcha.com", "hCaptcha"),
    ("captcha-delivery.com", "DataDome's captcha"),
    ("px-captcha", "PerimeterX's captcha"),
    ("_incapsula_resource", "Imperva Incapsula"),
    ("awswaf", "AWS WAF's captcha"),
)
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)


def wall_evidence(status: int, headers: Mapping[str, str], body: bytes) -> list[str]:
    """The evidence that a response (its `status`, `headers` with lower-case names, `body`) is
    a bot wall, each a phrase naming what decided it; [] when it is none (see the module)."""
    evidence = []
    mitigated = headers.get("cf-mitigated", "").strip().lower()
    if mitigated == "challenge":
        evidence.append("header cf-mitigated: challenge")
    if status not in WALL_STATUSES:
        return [f"HTTP {status}", *evidence] if evidence else []
    head = body[:WALL_BYTES]
    page = []
    title = page_title(head)
    if title and title.lower().startswith(WALL_TITLES):
        page.append(f"title '{title}'")
    lowered = head.lower()
    named = {name for marker, name in WALL_MARKERS if marker.encode() in lowered}
    page.extend(f"the page loads {name}" for name in sorted(named))
    if not evidence and not page:
        return []
    return [f"HTTP {status}", *evidence, *page]


def page_title(head: bytes) -> str:
    """The first <title>'s text as one printable line: a character that is not printable (a
    control, a NUL a hostile page sends) is a space, whitespace collapsed; at most TITLE_CHARS
    characters ("" if none). It is signed as evidence and shown by every verifier."""
    match = _TITLE.search(head)
    if match is None:
        return ""
    text = match.group(1).decode("utf-8", "replace")
    printable = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(printable.split())[:TITLE_CHARS]
