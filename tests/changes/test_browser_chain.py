"""Change events follow a page's browser captures as the chain of their own they are
(docs/format.md, "browser captures"): a plain capture and its browser twin read different main
texts (the script's paragraphs are in the rendered one only), which is no edit of the page; an
edit of the rendered text alone, between two browser captures, is one. Before, the two chains
were followed as one, and every capture after its twin of the other mode was an `edited` event.
Whether the page answered is the plain chain's to say: a blocked browser capture between two
that render alike is no event (its plain twin answered).

A real ledger: an item and its captures in the order a crawl signs them (plain, then browser).
"""

from __future__ import annotations

from pathlib import Path

from ledger.changes import derive_changes
from ledger.envelope import axiom_id_of
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web.corpus_browser import BROWSER, VALID
from tests.web.corpus_capture import EDITED_TEXT, OUTCOMES, TEXT, capture

ITEM = sample_envelope(1)
RENDERED = EDITED_TEXT  # the plain text and the script's paragraphs
RENDERED_AGAIN = {**TEXT, "sha256": "9" * 64, "length": 1300}  # a script's paragraph edited


def test_a_browser_capture_is_compared_with_browser_captures_only(tmp_path: Path) -> None:
    item = axiom_id_of(ITEM)
    browser = {"mode": "browser", "browser": BROWSER}
    chains: dict[str, list[dict]] = {"plain": [], "browser": []}

    def captured(mode: str, outcome: str, text: dict | None) -> dict:
        chain = chains[mode]
        previous = axiom_id_of(chain[-1]) if chain else ""
        facts = {**OUTCOMES["first"], "text": text, **(browser if mode == "browser" else {})}
        if text is None:  # a wall answered the browser
            facts = VALID["blocked"][1]
        number = len(chains["plain"]) + len(chains["browser"])
        chain.append(capture(item, outcome, number, previous, **facts))
        return chain[-1]

    records = [
        captured("plain", "first", TEXT),
        captured("browser", "first", RENDERED),
        captured("plain", "unchanged", TEXT),
        captured("browser", "unchanged", RENDERED),
        captured("plain", "unchanged", TEXT),
        captured("browser", "failed", None),
        captured("plain", "unchanged", TEXT),
        captured("browser", "edited", RENDERED_AGAIN),
    ]
    with Ledger.open(tmp_path / "ledger", signing_key=TEST_KEY) as ledger:
        ledger.issue([ITEM, *records])
        ledger.seal()
    events = derive_changes(tmp_path / "ledger")
    assert [(e.kind, [r.axiom_id for r in e.records]) for e in events] == [
        ("edited", [axiom_id_of(records[3]), axiom_id_of(records[7])])
    ]
    # said of the item's page as a plain capture's event is: its vendor and title
    assert (events[0].vendor, events[0].title) == ("arxiv_cs_ai", "Item 1: Ünïcode title")
