"""In Chromium: the receipt of arXiv's coverage record (AX.COVERAGE) made by a real crawl is
verified by the published page under the site's key and shown as `crovia verify` words it (the
category and day, how far each read went, each set by its count and each difference with its
ids), every row text. A coverage record whose category or a listed id holds markup, signed and
sealed by the site's own key as a careless signer would, is refused at `envelope_shape` by the
page and by `crovia verify` alike, and nothing of it becomes HTML: no row of it is shown, no
element is made of it, its script never runs.

The ledger: a crawl of an arXiv RSS feed and of the loopback OAI-PMH fixture
(tests/spider/oaipmh_server.py), then `crovia arxiv coverage --record`; published by `crovia
publish` and served by `crovia serve`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import nacl.signing
import pytest

from ledger.canonical import canonical_json
from ledger.envelope import sign_envelope
from ledger.keys import load_signing_key
from ledger.merkle import leaf_hash
from ledger.records.coverage import ids_digest
from ledger.store import Ledger
from tests.crawl import crovia, leaves, run_crawl
from tests.spider.oaipmh_server import OaiServer, Paper, rss
from tests.web import corpus as c
from tests.web.conftest import Server, publish
from tests.web.corpus_coverage import MARKUP_CATEGORY, MARKUP_ID, PWNED
from tests.web.corpus_eras import resealed
from tests.web.test_differential import Case, cli_outcome
from tests.web.test_page import verdict_of
from tests.web.test_page_fetch_record import fields

pytestmark = pytest.mark.slow

DAY = datetime.now(UTC).date() - timedelta(days=2)
PAPERS = [Paper(f"2612.0030{n}", DAY.isoformat(), categories="cs.AI cs.LG") for n in range(1, 4)]
GONE = Paper("2612.00399", DAY.isoformat(), deleted=True)
NOT_LISTED = Paper("2612.00309", DAY.isoformat())  # announced by the RSS, never listed


@dataclass
class Site:
    base: str
    directory: Path
    record: dict[str, Any]  # the AX.COVERAGE envelope the crawl's ledger signed
    key: nacl.signing.SigningKey

    def add(self, name: str, receipt: dict[str, Any]) -> str:
        samples = self.directory / "samples"
        samples.mkdir(exist_ok=True)
        (samples / f"{name}.json").write_bytes(c.receipt_bytes(receipt))
        return f"{self.base}v/?src=/samples/{name}.json"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    work = tmp_path_factory.mktemp("coverage-page")
    with OaiServer([*PAPERS, GONE], page_size=2) as server:
        server.rss["cs.AI"] = rss("cs.AI", DAY, [(p, "new") for p in [*PAPERS[:2], NOT_LISTED]])
        feeds = [
            {"vendor": "arxiv_cs_ai", "url": server.rss_url("cs.AI")},
            {"vendor": "arxiv_oai", "url": server.url, "kind": "oaipmh", "set": ["cs"]},
        ]
        crawl = run_crawl(work, feeds, "-s", f"CROVIA_OAI_FROM={DAY.isoformat()}")
        assert crawl.returncode == 0, crawl.stderr[-3000:]
    day = DAY.isoformat()
    recorded = crovia(work, "arxiv", "coverage", "--category", "cs.AI", "--record", "--json",
                      "--from", day, "--to", day)  # fmt: skip
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    (axiom_id,) = json.loads(recorded.stdout)["recorded"]
    (record,) = [e for e in leaves(work) if e["axiom_id"] == axiom_id]
    publish(work / "ledger", work / "public")
    server = Server(work / "public")
    try:
        yield Site(
            server.base, work / "public", record, load_signing_key(work / "keys" / "signing.key")
        )
    finally:
        server.stop()


def signed_alone(
    site: Site, work: Path, change: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """The receipt of the crawl's coverage record alone in a ledger of the site's key, its body
    then `change`d and the envelope, leaf and seal signed again by that key: what a signer that
    let such a body through would publish (ours refuses it)."""
    unsigned = {
        k: v for k, v in site.record.items() if k not in ("axiom_id", "signature", "anchors")
    }
    with Ledger.open(work, signing_key=site.key) as ledger:
        (issued,) = ledger.issue([unsigned])
        ledger.seal()
        out = copy.deepcopy(ledger.receipt(issued.axiom_id))
    envelope = out["envelope"]
    change(envelope["body"])
    full = sign_envelope(envelope, envelope["anchors"], site.key)
    leaf = leaf_hash(canonical_json(full)).hex()
    out.update(envelope=full, axiom_id=full["axiom_id"])
    out["verifier"]["url"] = f"/v/{full['axiom_id']}"
    out["ledger"]["leaf_hash"] = leaf
    return resealed(out, site.key, merkle_root=leaf, rfc6962_root=leaf)


def nothing_became_html(page: object) -> None:
    assert page.title() != "pwned"
    assert (
        page.locator("main img, #vouches *:not(dt):not(dd), #checks img, #checks script").count()
        == 0
    )
    assert "<img src=" not in page.content() and f"<script>{PWNED}" not in page.content()


def test_a_real_crawls_coverage_record_is_verified_and_shown_as_text(site: Site, page) -> None:
    body = site.record["body"]
    page.goto(site.base + f"v/{site.record['axiom_id']}")
    result = verdict_of(page)
    assert (result["verdict"], result["key"]) == ("valid", "site"), result
    assert result["checks"]["envelope_shape"] == "true"
    assert page.locator("#vouches").get_attribute("data-kind") == "coverage"
    shown = fields(page)
    assert "coverage of a category and day" in shown["kind"]
    oai_fetches = len(body["oai"]["fetches"])
    assert {name: shown[name] for name in (
        "vendor", "category", "day", "computed_at", "rss", "oai", "announced", "harvested",
        "both", "rss_only", "oai_only", "deleted",
    )} == {
        "vendor": "arxiv",
        "category": "cs.AI",
        "day": DAY.isoformat(),
        "computed_at": body["computed_at"],
        "rss": "read (1 fetch record(s))",
        "oai": f"complete ({oai_fetches} fetch record(s))",
        "announced": "3",
        "harvested": "3",
        "both": "2",
        "rss_only": f"1: {NOT_LISTED.id}",
        "oai_only": f"1: {PAPERS[2].id}",
        "deleted": f"1: {GONE.id}",
    }  # fmt: skip
    assert oai_fetches >= 1
    # every row a term and its text, nothing else
    assert page.evaluate(
        "[...document.querySelectorAll('#vouches > *')].every("
        "n => (n.tagName === 'DT' || n.tagName === 'DD') && n.children.length === 0)"
    )
    # what crovia verify says of the same receipt
    receipt = site.directory / "receipts" / f"{site.record['axiom_id']}.json"
    pin = c.trust_root(site.key)
    assert cli_outcome(Case("real", receipt.read_bytes(), pin)) == ("valid", None)


def _markup_category(body: dict[str, Any]) -> None:
    body["category"] = MARKUP_CATEGORY


def _markup_id(body: dict[str, Any]) -> None:
    body["rss_only"] = {"count": 1, "ids": [MARKUP_ID], "ids_sha256": ids_digest([MARKUP_ID])}


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("category", _markup_category, "body.category is not an arXiv category"),
        ("id", _markup_id, "body.rss_only.ids is not a list of arXiv ids"),
    ],
)
def test_a_coverage_record_holding_markup_is_refused_and_never_html(
    site: Site, page, tmp_path: Path, name: str, change, message: str
) -> None:
    hostile = signed_alone(site, tmp_path / "alone", change)
    url = site.add(f"markup-{name}", hostile)
    page.goto(url)
    result = verdict_of(page)
    assert (result["verdict"], result["failed"]) == ("invalid", "envelope_shape"), result
    assert result["checks"]["envelope_signature"] == "true"  # signed by the site's key
    assert message in page.locator("#verdict").text_content()
    assert page.locator("#vouches > *").count() == 0  # nothing of an invalid record is shown
    nothing_became_html(page)
    pin = c.trust_root(site.key)
    assert cli_outcome(Case(name, c.receipt_bytes(hostile), pin)) == ("invalid", "envelope_shape")
    # the same bytes with the markup undone verify: only the markup made it invalid
    honest = signed_alone(site, tmp_path / "honest", lambda body: None)
    page.goto(site.add(f"honest-{name}", honest))
    assert verdict_of(page)["verdict"] == "valid"
