"""Differential-corpus cases of browser captures (AX.CAPTURE with `mode` "browser",
docs/format.md "Browser captures"): one record of each verdict (complete, partial, blocked,
failed), valid and pinned in `crovia verify` and the page alike, beside the plain captures of
corpus_capture.py, which keep their exact shape; and records whose `mode` or `browser` breaks one
rule of ledger/records/capture.py browser_problem each, invalid at `envelope_shape` in both. A few
valid ones sit on edges two verifiers could count differently: 20 reasons, a reason of 1,024
characters outside the BMP, a viewport of 1,000,000 pixels, no twin.

Every receipt comes from a real ledger signed by TEST_KEY; each out-of-shape record is a valid
one's one-leaf receipt, changed and signed again by hand (corpus_eras.one_leaf_with).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ledger.envelope import axiom_id_of
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web import corpus as c
from tests.web.corpus_capture import OUTCOMES, _receipts, capture
from tests.web.corpus_eras import one_leaf_with

TWIN = "axm_" + "5" * 64
BROWSER = {
    "verdict": "complete",
    "twin": TWIN,
    "exchanges_sha256": "3" * 64,
    "requests": 12,
    "refused": 0,
    "failed": 0,
    "screenshot": {"sha256": "4" * 64, "width": 1280, "height": 4210},
    "dom": {"sha256": "6" * 64, "length": 48213},
    "software": {"browser": "Chromium 156.0.8078.114", "driver": "Playwright 1.65.3"},
    "viewport": {"width": 1280, "height": 800},
    "user_agent": "crovia-spider/0.1 (+https://github.com/crovia/crovia-spider)",
    "options": {"seconds": 30, "max_requests": 500, "javascript": True, "wait": "load"},
}
PARTIAL = {
    **BROWSER,
    "verdict": "partial",
    "failed": 1,
    "refused": 2,
    "reasons": [
        "cut https://lab.example.org/static/slow.js: no answer within the page's 30 s",
        "refused http://10.0.0.7/metrics: 10.0.0.7 is a private address",
        "refused http://192.168.1.1/x.png: 192.168.1.1 is a private address",
    ],
}
BLOCKED = {
    **{k: v for k, v in BROWSER.items() if k not in ("screenshot", "dom")},
    "verdict": "blocked",
    "requests": 1,
    "failed": 1,
    "reasons": ["HTTP 403", "header cf-mitigated: challenge", "title 'Just a moment...'"],
}
NO_PAGE = {
    **{k: v for k, v in BROWSER.items() if k not in ("screenshot", "dom", "twin")},
    "verdict": "failed",
    "requests": 1,
    "failed": 1,
    "reasons": ["timed out: the page took longer than 30 s"],
}
WALL = {
    "status": 403,
    "final_url": OUTCOMES["first"]["final_url"],
    "body_sha256": "9" * 64,
    "body_length": 5120,
    "error": "blocked: HTTP 403, header cf-mitigated: challenge",
}
# (outcome of the record, its facts) of each valid browser capture.
VALID: dict[str, tuple[str, dict[str, Any]]] = {
    "complete": ("first", {**OUTCOMES["first"], "mode": "browser", "browser": BROWSER}),
    "partial": ("edited", {**OUTCOMES["edited"], "mode": "browser", "browser": PARTIAL}),
    "blocked": ("failed", {**WALL, "mode": "browser", "browser": BLOCKED}),
    "failed, no answer": ("failed", {"error": "timed out", "mode": "browser", "browser": NO_PAGE}),
    "complete, a 404 page": (
        "removed",
        {**OUTCOMES["removed"], "mode": "browser", "browser": BROWSER},
    ),
    "20 reasons": (
        "first",
        {
            **OUTCOMES["first"],
            "mode": "browser",
            "browser": {**PARTIAL, "reasons": [f"cut {n}" for n in range(20)]},
        },
    ),
    "a reason of 1,024 characters outside the BMP": (
        "first",
        {**OUTCOMES["first"], "mode": "browser", "browser": {**PARTIAL, "reasons": ["😀" * 1024]}},
    ),
    "a viewport of 1,000,000 pixels": (
        "first",
        {
            **OUTCOMES["first"],
            "mode": "browser",
            "browser": {**BROWSER, "viewport": {"width": 1_000_000, "height": 1}},
        },
    ),
}


def _set(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body["browser"].update(fields)


def _drop(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda body: body["browser"].pop(name)


def _body(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.update(fields)


def _plain(body: dict[str, Any]) -> None:
    del body["mode"]


# Each breaks one rule of browser_problem, on the valid record named first.
BROKEN: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "browser without mode": ("complete", _plain),
    "another mode": ("complete", _body(mode="headless")),
    "mode without browser": ("complete", lambda body: body.pop("browser")),
    "browser a list": ("complete", _body(browser=[])),
    "an unknown browser key": ("complete", _set(cookies="a=1")),
    "no verdict": ("complete", _drop("verdict")),
    "no exchanges": ("complete", _drop("exchanges_sha256")),
    "no options": ("complete", _drop("options")),
    "another verdict": ("complete", _set(verdict="ok")),
    "exchanges not hex": ("complete", _set(exchanges_sha256="g" * 64)),
    "requests negative": ("complete", _set(requests=-1)),
    "refused a string": ("complete", _set(refused="0")),
    "failed true": ("complete", _set(failed=True)),
    "more refused and failed than requests": ("partial", _set(requests=2)),
    "twin not an axiom_id": ("complete", _set(twin="axm_" + "5" * 63)),
    "reasons empty": ("partial", _set(reasons=[])),
    "21 reasons": ("partial", _set(reasons=[f"cut {n}" for n in range(21)])),
    "a reason of 1,025 characters": ("partial", _set(reasons=["x" * 1025])),
    "a reason empty": ("partial", _set(reasons=[""])),
    "screenshot without height": ("complete", _set(screenshot={"sha256": "4" * 64, "width": 1})),
    "screenshot 0 wide": (
        "complete",
        _set(screenshot={"sha256": "4" * 64, "width": 0, "height": 1}),
    ),
    "dom length negative": ("complete", _set(dom={"sha256": "6" * 64, "length": -1})),
    "software without driver": ("complete", _set(software={"browser": "Chromium"})),
    "viewport over 1,000,000": ("complete", _set(viewport={"width": 1_000_001, "height": 1})),
    "user agent empty": ("complete", _set(user_agent="")),
    "an option of a capitalised name": ("complete", _set(options={"Seconds": 30})),
    "an option null": ("complete", _set(options={"seconds": None})),
    "21 options": ("complete", _set(options={f"o{n}": n for n in range(21)})),
    "complete with reasons": ("complete", _set(reasons=["cut x"])),
    "partial without reasons": ("partial", _drop("reasons")),
    "blocked as a version": ("complete", _set(verdict="blocked", reasons=["HTTP 403"])),
    "failed as a version": ("partial", _set(verdict="failed")),
}


def _changed(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], dict]:
    def body_changed(body: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(body)
        change(out)
        return out

    return body_changed


def browser_receipts(work: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """Receipts of the valid browser captures (one ledger: an item and its captures) and of the
    out-of-shape ones (each a one-leaf ledger's, changed and signed again)."""
    item = axiom_id_of(sample_envelope(1))
    records = [
        capture(item, outcome, 20 + n, **facts) for n, (outcome, facts) in enumerate(VALID.values())
    ]
    _, *receipts = _receipts(work / "browser", [sample_envelope(1), *records])
    valid = dict(zip(VALID, receipts, strict=True))
    alone = {
        name: _receipts(work / f"alone_{n}", [records[n]])[0]
        for n, name in enumerate(VALID)
        if name in {base for base, _ in BROKEN.values()}
    }
    broken = {
        name: one_leaf_with(alone[base], "", "body", _changed(change))
        for name, (base, change) in BROKEN.items()
    }
    return valid, broken


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    del pki  # no stamps here
    valid, broken = browser_receipts(work)
    pin = c.trust_root(TEST_KEY)
    return [
        *(
            c.Expected(f"browser capture {name}", r, pin, "valid", None)
            for name, r in valid.items()
        ),
        *(
            c.Expected(f"browser capture, {name}", r, pin, "invalid", "envelope_shape")
            for name, r in broken.items()
        ),
    ]
