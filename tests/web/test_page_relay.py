"""In Chromium: the receipt of a relayed feed's fetch record, and of an item from it, shows "via
<relay>" as `crovia verify` says it, as text (a relay that looks like HTML stays text); a receipt
of a vendor's own feed shows no relay row."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web.conftest import Server, publish
from tests.web.corpus_relay import relayed_fetch, relayed_item
from tests.web.test_page import verdict_of
from tests.web.test_page_fetch_record import fields

pytestmark = pytest.mark.slow

HOSTILE = "<img src=x onerror=\"document.title='pwned'\"> relay"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    work = tmp_path_factory.mktemp("relay-page")
    envelopes = [relayed_fetch(HOSTILE), relayed_item(HOSTILE), sample_envelope(2)]
    with Ledger.open(work / "ledger", signing_key=TEST_KEY) as ledger:
        ids = [issued.axiom_id for issued in ledger.issue(envelopes)]
        ledger.seal()
    publish(work / "ledger", work / "public")
    server = Server(work / "public")
    try:
        yield server.base, ids
    finally:
        server.stop()


@pytest.mark.parametrize(("leaf", "kind"), [(0, "fetch"), (1, "item")])
def test_a_relayed_receipt_shows_via_its_relay_as_text(served, page, leaf, kind) -> None:
    base, ids = served
    page.goto(base + f"v/{ids[leaf]}")
    assert verdict_of(page)["verdict"] == "valid"
    assert page.locator("#vouches").get_attribute("data-kind") == kind
    shown = fields(page)
    assert shown["relay"] == f"via {HOSTILE}"
    assert page.locator("main img, main script").count() == 0
    assert page.title() != "pwned"


def test_a_vendors_own_item_shows_no_relay(served, page) -> None:
    base, ids = served
    page.goto(base + f"v/{ids[2]}")
    assert verdict_of(page)["verdict"] == "valid"
    assert "relay" not in fields(page)
