"""A fetch record's `parts` and `select` (a sitemap walk's further fetches; the reader's options):
new_fetch_envelope refuses malformed ones, and the monitor's check of every published fetch record
(validate_fetch_body) holds them to the shape docs/format.md gives."""

from __future__ import annotations

import pytest

from ledger.exceptions import InvalidRecord
from ledger.records.fetch import describe_fetch, new_fetch_envelope, validate_fetch_body

DIGEST = "ab" * 32
FIELDS = dict(spider="vendor_press", vendor="lab", feed_url="https://lab.example/robots.txt",
              outcome="new_body", fetched_at="2026-06-18T05:00:00.000000Z", run_hash="0" * 64,
              issued_at="2026-06-18T05:00:01Z", kind="sitemap")  # fmt: skip
GOOD_PARTS = [
    {"url": "https://lab.example/i.xml", "final_url": "https://lab.example/i.xml", "status": 200,
     "body_sha256": DIGEST, "content_type": "application/xml"},
    {"url": "https://lab.example/big.xml.gz", "final_url": "https://lab.example/big.xml.gz",
     "status": 200, "body_sha256": DIGEST, "error": "refused: too large"},
    {"url": "https://lab.example/gone.xml", "final_url": "https://lab.example/gone.xml",
     "error": "HTTP 404"},
    {"url": "https://lab.example/later.xml", "error": "not fetched: past the 2 sitemaps"},
    {"url": "https://lab.example/i.xml", "loop": True},
]  # fmt: skip


def test_a_walk_record_signs_its_parts_and_options():
    envelope = new_fetch_envelope(
        **FIELDS, parts=GOOD_PARTS, select={"include": ["/news/"]}, body_sha256=DIGEST
    )
    body = envelope["body"]
    assert body["parts"] == GOOD_PARTS and body["select"] == {"include": ["/news/"]}
    validate_fetch_body(body)
    said = describe_fetch(envelope)
    assert said.startswith("feed lab (https://lab.example/robots.txt), a sitemap source fetched")
    assert "5 further fetches (1 read, 3 not read, 1 already read in this walk)" in said
    plain = new_fetch_envelope(**FIELDS)["body"]
    assert "parts" not in plain and "select" not in plain  # other records keep their shape


@pytest.mark.parametrize(
    ("parts", "says"),
    [
        ([], "body.parts is not a list of 1 to 1000 parts"),
        ("x", "body.parts is not a list"),
        ([{"url": 3, "error": "x"}], "body.parts[0].url is not a string"),
        ([{"url": "u", "extra": 1, "error": "x"}], "body.parts[0] is not an object of"),
        ([{"url": "u", "body_sha256": "AB" * 32, "status": 200, "final_url": "u"}], "64 lowercase"),
        ([{"url": "u", "body_sha256": DIGEST}], "names a body without its status and final_url"),
        ([{"url": "u", "loop": 1}], "is a loop"),
        ([{"url": "u", "loop": True, "error": "x"}], "is a loop"),
        ([{"url": "u"}], "names neither a body, an error nor a loop"),
        ([{"url": "u", "error": 5}], "body.parts[0].error is not a string"),
        ([{"url": "u", "error": "x"}] * 1001, "1 to 1000 parts"),
    ],
)
def test_malformed_parts_are_refused_by_the_monitor_check(parts, says):
    body = new_fetch_envelope(**FIELDS)["body"]
    body["parts"] = parts
    with pytest.raises(InvalidRecord) as refused:
        validate_fetch_body(body)
    assert says in str(refused.value)
    if isinstance(parts, list) and parts:
        with pytest.raises(InvalidRecord):
            new_fetch_envelope(**FIELDS, parts=parts)


@pytest.mark.parametrize(
    ("select", "says"),
    [
        (["/news/"], "body.select is not an object of selectors, include and exclude"),
        ({"includes": ["/news/"]}, "body.select is not an object of selectors"),
        ({"include": 5}, "body.select.include is not a list of strings"),
        ({"include": "news"}, "body.select.include is not a list of strings"),
        ({"exclude": [3]}, "body.select.exclude is not a list of strings"),
        ({"selectors": {"item": 1}}, "body.select.selectors is not an object of strings"),
    ],
)
def test_a_select_not_of_its_shape_is_refused(select, says):
    body = new_fetch_envelope(**FIELDS)["body"]
    body["select"] = select
    with pytest.raises(InvalidRecord) as refused:
        validate_fetch_body(body)
    assert says in str(refused.value)


def test_a_hostile_reading_in_a_signed_record_is_an_error_when_read_again():
    """A record's select and parts are untrusted when its kept body is read again: a wrong shape
    is an answer of "cannot be read", never an exception (crovia absent, crovia history)."""
    from crovia_spider.spiders.reread import read_kept_body

    record = {
        "vendor": "lab", "feed_url": "https://lab.example/s.xml", "kind": "sitemap",
        "entries": {"limit": 10},
    }  # fmt: skip
    body = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>'
    hostile = [
        {"select": {"include": 5}},
        {"select": {"include": "news"}},
        {"parts": "bogus"},
        {"parts": [{"url": "u", "body_sha256": DIGEST}]},  # no final_url
    ]
    for extra in hostile:
        found = read_kept_body(body, {**record, **extra}, record["feed_url"])
        assert found["error"].startswith("the fetch record says no reading we follow"), extra
