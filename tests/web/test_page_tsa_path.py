"""Issue 30, observation 2, in Chromium: a token whose TSA certificate is issued by an end-entity
certificate (CA:FALSE, serverAuth) under a pinned TSA root, its genTime 77 s before the seal was
signed. The page said "Valid ... earliest time vouched for by a pinned third party: <that
time>"; `crovia verify` said invalid at `rfc3161`. Now the page says invalid, naming `rfc3161`,
and vouches for no time; so it does for each flaw alone.

The page is the published page with a trust root naming the TSA's root embedded the way `crovia
publish` embeds the site's (as tests/web/test_page_verdicts.py does), served by `crovia serve`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from crovia_spider.demo_tsa import OPENSSL, OpenSslTsa
from crovia_spider.web.site import _embedded
from tests.vectors.make_vectors import TEST_KEY, build_ledger
from tests.web import corpus as c
from tests.web import hostile_pki as h
from tests.web.conftest import Server, publish
from tests.web.corpus_tsa import sealed_ahead
from tests.web.test_page import verdict_of
from tests.web.test_page_verdicts import EMBEDDED

pytestmark = pytest.mark.slow


@dataclass
class Site:
    base: str
    page: str  # the path of the page pinned to the site's key and the TSA's root
    gen_times: dict[str, str]


def _token_receipt(receipt: dict[str, Any], pki: Any) -> dict[str, Any]:
    data = c.seal_bytes(receipt)
    with OpenSslTsa(pki) as tsa:
        token = c.der_token(c.tsa_token(tsa, data))
        return c.with_token(receipt, token, c.gen_time_of(token, data), tsa.url)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    work = tmp_path_factory.mktemp("tsa-path")
    early = sealed_ahead(work / "ahead")[0]  # sealed 77 s ahead of the TSA's clock
    on_time = build_ledger(work / "on-time", 3)[0]
    directory = work / "public"
    publish(work / "ahead", directory)
    forged_path = h.chained_pki(work / "forged", "Observation2", intermediates=[h.END_ENTITY])
    proper_path = h.chained_pki(work / "proper", "Proper")
    receipts = {
        "observation-2": _token_receipt(early, forged_path),
        "end-entity-issuer": _token_receipt(on_time, forged_path),
        "early-token": _token_receipt(early, proper_path),
        "proper": _token_receipt(on_time, proper_path),
    }
    (directory / "samples").mkdir()
    for name, receipt in receipts.items():
        (directory / "samples" / f"{name}.json").write_bytes(c.receipt_bytes(receipt))
    roots = c.tsa_roots_pem(forged_path) + c.tsa_roots_pem(proper_path)
    pinned = directory / "pinned"
    shutil.copytree(directory / "v", pinned)
    index = pinned / "index.html"
    trust = _embedded(c.trust_root(TEST_KEY, tsa_roots=roots))
    html, count = EMBEDDED.subn(lambda m: m[1] + trust + m[3], index.read_bytes())
    assert count == 1
    index.write_bytes(html)
    server = Server(directory)
    gen_times = {n: r["rfc3161_timestamps"][0]["gen_time"] for n, r in receipts.items()}
    try:
        yield Site(server.base, "/pinned/index.html", gen_times)
    finally:
        server.stop()


def _open(site: Site, page: object, name: str) -> dict[str, Any]:
    page.goto(site.base.rstrip("/") + site.page + f"?src=/samples/{name}.json")
    return verdict_of(page)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("observation-2", "is not a CA certificate"),
        ("end-entity-issuer", "is not a CA certificate"),
        ("early-token", "genTime is before the seal's sealed_at"),
    ],
)
def test_the_page_refuses_a_path_through_a_non_ca_or_a_token_older_than_its_seal(
    site: Site, page: object, name: str, why: str
) -> None:
    result = _open(site, page, name)
    assert (result["verdict"], result["failed"]) == ("invalid", "rfc3161"), result
    assert result["checks"]["rfc3161"] == "false"
    banner = page.locator("#verdict").text_content()
    assert "rfc3161" in banner and why in banner, banner
    assert banner.startswith("Invalid") and "every check passed" not in banner.lower()
    vouched = page.locator("[data-field='earliest-time']")
    assert all(
        site.gen_times[name] not in vouched.nth(i).text_content() for i in range(vouched.count())
    )


def test_the_same_token_through_a_proper_ca_after_the_seal_is_valid(
    site: Site, page: object
) -> None:
    result = _open(site, page, "proper")
    assert result["verdict"] == "valid", result
    earliest = page.locator("[data-field='earliest-time']").text_content()
    assert earliest == f"{site.gen_times['proper']} (the TSA CN=Proper TSA)"
