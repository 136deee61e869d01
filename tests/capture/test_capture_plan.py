"""What a run record says of the pages a capture book follows (CaptureBook.plan; issue 43, obs
5), on a book alone: pages followed, due later, still due (never captured, or due and not taken),
the soonest time ahead; a page's browser chain (`KEY#browser`) is the same page, counted once."""

from __future__ import annotations

from crovia_spider.capture.book import DEFAULT_SCHEDULE, CaptureBook, Page, parse_schedule

NOW = "2026-12-01T12:00:00.000000Z"


def page(vendor: str, last: str = "", next_due: str = "") -> Page:
    return Page(url="https://lab.example.org/p", vendor=vendor, spider="vendor_press",
                item="axm_" + "0" * 64, last=last, next_due=next_due)  # fmt: skip


def test_plan_counts_each_vendors_pages():
    book = CaptureBook(parse_schedule(DEFAULT_SCHEDULE))
    captured = "axm_" + "1" * 64
    book.pages = {
        "a": page("lab", captured, "2026-12-01T13:00:00Z"),  # due later
        "b": page("lab", captured, "2026-12-01T12:30:00Z"),  # due later, the soonest
        "c": page("lab"),  # enrolled, never captured: due now
        "d": page("lab", captured, "2026-12-01T11:00:00Z"),  # due, not taken (over a budget)
        "a#browser": page("lab", captured, "2026-12-01T12:10:00Z"),  # page a, in a browser
        "e": page("other", captured, "2026-12-02T00:00:00Z"),  # not this crawl's vendor
    }
    assert book.plan(NOW, {"lab", "quiet"}) == {
        "lab": {"followed": 4, "due_later": 2, "still_due": 2, "next_due": "2026-12-01T12:30:00Z"},
        "quiet": {"followed": 0, "due_later": 0, "still_due": 0, "next_due": ""},
    }
    # What is due now: the page never captured and the one due, never those due later.
    assert sorted(job.key for job in book.due(NOW, {"lab"})) == ["c", "d"]
