"""What makes a main document a wall, and a browser capture complete, partial, blocked or failed
(crovia_spider/capture/walls.py, exchanges.py): the rules on their own, no browser."""

from __future__ import annotations

import pytest

from crovia_spider.capture.exchanges import Exchange, Exchanges, verdict
from crovia_spider.capture.walls import page_title, wall_evidence

JUST_A_MOMENT = b"<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>"


@pytest.mark.parametrize(
    ("status", "headers", "body", "evidence"),
    [
        (403, {"cf-mitigated": "challenge"}, JUST_A_MOMENT,
         ["HTTP 403", "header cf-mitigated: challenge", "title 'Just a moment...'"]),
        (200, {"cf-mitigated": " Challenge "}, b"", ["HTTP 200", "header cf-mitigated: challenge"]),
        (429, {}, b"<div class='g-recaptcha'></div>", ["HTTP 429", "the page loads reCAPTCHA"]),
        (503, {}, b"<title>Attention Required! | Cloudflare</title>",
         ["HTTP 503", "title 'Attention Required! | Cloudflare'"]),
        (403, {}, b"<title>Forbidden</title><p>No.</p>", []),  # a refusal, not a wall
        (200, {}, JUST_A_MOMENT, []),  # a page may be titled so: only a refusing status counts
        (404, {"cf-mitigated": "block"}, JUST_A_MOMENT, []),
        (403, {}, b" " * (300 * 1024) + b"<div class='g-recaptcha'>", []),  # past what is read
    ],
)  # fmt: skip
def test_wall_evidence(status, headers, body, evidence):
    assert wall_evidence(status, headers, body) == evidence


def test_a_title_is_one_printable_line_of_at_most_200_characters():
    line_separator = "\u2028".encode()
    title = b"<title>\n Just\x00a\tmoment" + line_separator + b"...</title>"
    assert page_title(title) == "Just a moment ..."
    assert page_title(b"<TITLE lang=en>" + b"x" * 500 + b"</TITLE>") == "x" * 200
    assert page_title(b"<p>no title</p>") == ""


def answered(url: str, status: int = 200, **facts) -> Exchange:
    return Exchange(url, status=status, body_sha256="a" * 64, body_length=1, **facts)


@pytest.mark.parametrize(
    ("main", "others", "wall", "loaded", "failure", "expected"),
    [
        (answered("/"), [answered("/a.js")], [], True, "", ("complete", [])),
        (answered("/"), [answered("/a.js", 404)], [], True, "",
         ("partial", ["failed /a.js: HTTP 404"])),
        (answered("/"), [Exchange("/x", refused="a private address")], [], True, "",
         ("partial", ["refused /x: a private address"])),
        (answered("/"), [Exchange("/s.js", cut=True, error="no answer within the page's 5 s")],
         [], False, "", ("partial", ["the page's load event did not come within its time",
                                     "cut /s.js: no answer within the page's 5 s"])),
        (answered("/", 403), [], ["HTTP 403", "title 'Just a moment...'"], False, "",
         ("blocked", ["HTTP 403", "title 'Just a moment...'"])),
        (None, [], [], False, "timed out", ("failed", ["timed out"])),
        (answered("/"), [], [], True, "the page crashed", ("failed", ["the page crashed"])),
    ],
)  # fmt: skip
def test_verdict(main, others, wall, loaded, failure, expected):
    assert verdict(main, others, wall, loaded, failure) == expected


def test_past_twenty_reasons_the_last_says_how_many_more():
    others = [Exchange(f"/{n}.png", refused="over the page's 500 requests") for n in range(30)]
    found, reasons = verdict(answered("/"), others, [], True)
    assert found == "partial" and len(reasons) == 20
    assert reasons[-1] == "and 11 more, listed in the exchanges' manifest"


def test_the_manifest_lists_every_exchange_without_its_empty_fields():
    exchanges = Exchanges()
    exchanges.add(answered("https://lab.example.org/", navigation=True, resource_type="document"))
    exchanges.add(Exchange("http://10.0.0.7/x", resource_type="fetch", refused="private"))
    assert exchanges.manifest("https://lab.example.org/") == (
        b'{"exchanges":[{"body_length":1,"body_sha256":"' + b"a" * 64 + b'","method":"GET",'
        b'"navigation":true,"resource_type":"document","status":200,'
        b'"url":"https://lab.example.org/"},{"method":"GET","refused":"private",'
        b'"resource_type":"fetch","url":"http://10.0.0.7/x"}],'
        b'"page":"https://lab.example.org/","schema":"crovia.browser_exchanges.v1"}'
    )
    assert (exchanges.refused, exchanges.failed) == (1, 0)
