"""The page's three verdicts in Chromium: stamps checked in the browser (a real OpenSSL TSA on
127.0.0.1, OpenTimestamps proofs), key rotations followed from the site's trust root, another
key shown amber, and a phone-sized window.

Each page here is the published page with a given trust root embedded the way `crovia publish`
embeds the site's (crovia_spider/web/site.py), served by `crovia serve`.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crovia_spider.demo_tsa import OPENSSL, OpenSslTsa, TestPki
from crovia_spider.web.site import _embedded
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web import corpus as c
from tests.web.conftest import Server, publish
from tests.web.test_page import verdict_of

pytestmark = pytest.mark.slow

EMBEDDED = re.compile(rb'(<script type="application/json" id="site-trust-root">)(.*?)(</script>)')


@dataclass
class Pages:
    directory: Path
    base: str
    pki: TestPki
    receipts: dict[str, dict[str, Any]]
    header: bytes
    rotated: c.Rotated

    def add(self, name: str, receipt: dict[str, Any]) -> str:
        (self.directory / "samples" / f"{name}.json").write_bytes(c.receipt_bytes(receipt))
        return f"/samples/{name}.json"

    def pinned(self, name: str, trust: dict[str, Any] | None) -> str:
        """A copy of the published page whose embedded trust root is `trust`; its URL path."""
        target = self.directory / "pins" / name
        if not target.exists():
            shutil.copytree(self.directory / "v", target)
            index = target / "index.html"
            slot = _embedded(trust) if trust else b'{"key_id":null,"public_key_hex":null}'
            html, count = EMBEDDED.subn(lambda m: m[1] + slot + m[3], index.read_bytes())
            assert count == 1
            index.write_bytes(html)
        return f"/pins/{name}/index.html"

    def open(self, page: object, pin_name: str, trust: Any, receipt_name: str) -> dict:
        page.goto(
            self.base.rstrip("/")
            + self.pinned(pin_name, trust)
            + f"?src=/samples/{receipt_name}.json"
        )
        return verdict_of(page)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pages]:
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    work = tmp_path_factory.mktemp("stamped-site")
    with Ledger.open(work / "ledger", signing_key=TEST_KEY) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(4)])
        ledger.seal()
        receipts = [ledger.receipt(item.axiom_id) for item in issued]
    directory = work / "public"
    publish(work / "ledger", directory)
    (directory / "samples").mkdir()
    pki = TestPki(work / "pki")
    forger = TestPki(work / "forger", name="DigiCert Timestamp 2001")
    data = c.seal_bytes(receipts[0])
    with OpenSslTsa(pki) as tsa, OpenSslTsa(forger) as fake:
        token = c.tsa_token(tsa, data)
        forged = c.tsa_token(fake, data)
        url = tsa.url
    digest = c.seal_digest_of(receipts[0])
    pending_proof, _ = c.ots_proof(digest, confirmed=False)
    confirmed_proof, header = c.ots_proof(digest, confirmed=True)
    claimed = c.with_proof(receipts[0], pending_proof)
    claimed["bitcoin_anchor"]["status"] = "confirmed"
    samples = {
        "plain": receipts[1],
        "genuine-token": c.with_token(receipts[0], token, c.gen_time_of(token, data), url),
        "forged-token": c.with_token(receipts[0], forged, c.gen_time_of(forged, data), url),
        "pending": c.with_proof(receipts[0], pending_proof),
        "confirmed": c.with_proof(receipts[0], confirmed_proof),
        "claimed-confirmed": claimed,
    }
    for name, proof in c.bounded_proofs(digest):  # each attests what `pending` claims
        bounded = c.with_proof(receipts[0], pending_proof)
        bounded["bitcoin_anchor"]["ots_proof_base64"] = base64.b64encode(proof).decode()
        samples[f"proof-{name.replace(' ', '-')}"] = bounded
    rotated = c.rotated_ledger(work / "rotated")
    samples["before-rotation"] = rotated.before[0]
    samples["after-rotation"] = rotated.after[0]
    server = Server(directory)
    result = Pages(directory, server.base, pki, samples, header, rotated)
    for name, receipt in samples.items():
        result.add(name, receipt)
    try:
        yield result
    finally:
        server.stop()


def banner(page: object) -> str:
    return page.locator("#verdict").text_content()


def field(page: object, name: str) -> str:
    return page.locator(f"[data-field='{name}']").text_content()


def site_with_tsa(pages: Pages) -> dict[str, Any]:
    return c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(pages.pki))


def test_a_forged_token_is_invalid_naming_the_check(pages: Pages, page: object) -> None:
    result = pages.open(page, "site-tsa", site_with_tsa(pages), "forged-token")
    assert result["verdict"] == "invalid", result
    assert result["failed"] == "rfc3161"
    assert result["checks"]["rfc3161"] == "false"
    text = banner(page)
    assert "rfc3161" in text and "does not chain to a pinned root" in text
    assert "every check passed" not in text.lower()
    failed = page.locator("#checks [data-check='rfc3161'] .values").text_content()
    assert "expected" in failed and "Test Root CA" in failed  # the root the site trusts


def test_a_genuine_token_is_valid_with_the_tsa_name_and_time(pages: Pages, page: object) -> None:
    result = pages.open(page, "site-tsa", site_with_tsa(pages), "genuine-token")
    assert result["verdict"] == "valid", result
    assert result["checks"]["rfc3161"] == "true"
    gen_time = pages.receipts["genuine-token"]["rfc3161_timestamps"][0]["gen_time"]
    shown = field(page, "rfc3161-0")
    assert gen_time in shown and "CN=Test TSA" in shown and "chains to a TSA root" in shown
    assert "127.0.0.1" not in shown  # the unsigned tsa_url is no source of time
    assert field(page, "earliest-time") == f"{gen_time} (the TSA CN=Test TSA)"


def test_a_token_without_a_trusted_root_vouches_for_no_time(pages: Pages, page: object) -> None:
    result = pages.open(page, "site", c.trust_root(TEST_KEY), "forged-token")
    assert result["verdict"] == "valid", result  # as crovia verify without --tsa-root
    assert "not vouched for" in field(page, "rfc3161-0")
    assert "DigiCert" in field(page, "rfc3161-0")
    assert field(page, "earliest-time") == "none"


def test_a_pending_proof_says_pending(pages: Pages, page: object) -> None:
    result = pages.open(page, "site", c.trust_root(TEST_KEY), "pending")
    assert result["verdict"] == "valid", result
    assert result["checks"]["opentimestamps"] == "true"
    assert field(page, "opentimestamps").startswith("pending: submitted to " + c.CALENDAR)
    assert field(page, "earliest-time") == "none"


def test_a_forged_confirmed_anchor_is_invalid(pages: Pages, page: object) -> None:
    result = pages.open(page, "site", c.trust_root(TEST_KEY), "claimed-confirmed")
    assert result["verdict"] == "invalid", result
    assert result["failed"] == "opentimestamps"
    assert "claims what its proof does not attest" in banner(page)


@pytest.mark.parametrize(
    ("proof", "verdict"),
    [
        ("a-branch-repeated-in-the-root", "invalid"),
        ("more-operations-than-its-size-allows", "invalid"),
        ("a-reverse-operation", "valid"),
    ],
)
def test_a_proof_over_a_bound_gets_the_verdict_crovia_verify_gives(
    pages: Pages, page: object, tmp_path: Path, proof: str, verdict: str
) -> None:
    """The same receipt in Chromium and in `crovia verify --trust-root`: the same verdict and, when
    invalid, the same failing check (the page once took a repeated branch as valid)."""
    trust = c.trust_root(TEST_KEY)
    result = pages.open(page, "site", trust, f"proof-{proof}")
    receipt = pages.directory / "samples" / f"proof-{proof}.json"
    (tmp_path / "trust_root.json").write_text(json.dumps(trust))
    done = subprocess.run(
        [sys.executable, "-m", "crovia_spider", "verify", str(receipt), "--trust-root",
         str(tmp_path / "trust_root.json"), "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    cli = json.loads(done.stdout)
    assert (result["verdict"], cli["verdict"]) == (verdict, verdict), (result, cli)
    assert done.returncode == (0 if verdict == "valid" else 1)
    if verdict == "invalid":
        assert result["failed"] == cli["check"] == "opentimestamps", (result, cli)


def test_a_bitcoin_attestation_shows_its_block_and_takes_a_pasted_header(pages, page) -> None:
    result = pages.open(page, "site", c.trust_root(TEST_KEY), "confirmed")
    assert result["verdict"] == "valid", result
    shown = field(page, "opentimestamps")
    assert (
        f"Bitcoin block {c.BLOCK_HEIGHT}" in shown and "not checked against a block header" in shown
    )
    claim = pages.receipts["confirmed"]["bitcoin_anchor"]["bitcoin_attestations"][0]
    assert claim["merkle_root"] in shown
    page.fill("#bitcoin-header", c.other_header(pages.header).hex())
    page.click("#header-go")
    page.wait_for_selector("#verdict[data-verdict='invalid']", timeout=30_000)
    assert "no given block header has the merkle root" in banner(page)
    page.fill("#bitcoin-header", pages.header.hex())
    page.click("#header-go")
    page.wait_for_selector("#verdict[data-verdict='valid']", timeout=30_000)
    assert "2024-04-20T00:09:27Z" in field(page, "opentimestamps")
    assert field(page, "earliest-time") == f"2024-04-20T00:09:27Z (Bitcoin block {c.BLOCK_HEIGHT})"
    page.fill("#bitcoin-header", "not hex")
    page.click("#header-go")
    assert "160 hex characters" in page.locator("#header-error").text_content()


def test_a_receipt_from_before_a_rotation_is_valid_under_the_previous_key(pages, page) -> None:
    rotated = pages.rotated
    site_now = c.trust_root(c.NEW_KEY, [rotated.record])
    result = pages.open(page, "rotated", site_now, "before-rotation")
    assert result["verdict"] == "valid", result
    assert result["key"] == "previous"
    record = rotated.record
    assert banner(page) == (
        "Valid: every check passed. Signed by this site's previous key "
        f"{record['old_key_id']}, handed over to {record['new_key_id']} at {record['rotated_at']}."
    )
    after = pages.open(page, "rotated", site_now, "after-rotation")
    assert after["verdict"] == "valid" and after["key"] == "site"


def test_a_forged_rotation_is_invalid(pages: Pages, page: object) -> None:
    record = pages.rotated.record
    for name, signer in (("incoming-only", c.NEW_KEY), ("outsider", c.OTHER_KEY)):
        forged = c.signed_record(record, c.NEW_KEY, old_signer=signer)
        result = pages.open(page, name, c.trust_root(c.NEW_KEY, [forged]), "before-rotation")
        assert result["verdict"] == "invalid", (name, result)
        assert result["failed"] == "key_rotation"
        assert "old_signature does not verify" in banner(page)
    fork = c.trust_root(c.THIEF_KEY, [pages.rotated.fork])
    result = pages.open(page, "fork", fork, "after-rotation")
    assert result["verdict"] == "invalid" and result["failed"] == "key_rotation"
    assert "(a fork)" in banner(page)


def test_another_key_is_amber_and_not_vouched_for(pages: Pages, page: object) -> None:
    result = pages.open(page, "other-site", c.trust_root(c.OTHER_KEY), "plain")
    assert result["verdict"] == "unpinned", result
    assert result["failed"] == "pinned_key"
    assert result["checks"].pop("pinned_key") == "false"
    assert set(result["checks"].values()) == {"true"}
    text = banner(page)
    assert "not vouched for by this site" in text.lower()
    assert "every check passed" not in text.lower()
    colour = page.eval_on_selector("#verdict", "e => getComputedStyle(e).backgroundColor")
    assert colour == "rgb(255, 233, 184)"  # amber
    assert pages.open(page, "no-pin", None, "plain")["verdict"] == "unpinned"


@pytest.mark.parametrize(
    "sample", ["genuine-token", "confirmed", "before-rotation", "forged-token"]
)
def test_the_page_fits_a_phone_and_speaks_plainly(pages: Pages, browser, sample: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    phone = context.new_page()
    try:
        trust = site_with_tsa(pages) if "token" in sample else c.trust_root(TEST_KEY)
        if sample == "before-rotation":
            trust = c.trust_root(c.NEW_KEY, [pages.rotated.record])
        pages.open(phone, f"phone-{sample}", trust, sample)
        widths = phone.evaluate(
            "() => [document.documentElement.scrollWidth, document.body.scrollWidth,"
            " window.innerWidth]"
        )
        assert max(widths[:2]) <= widths[2], widths
        labels = phone.locator("#vouches dt, #checks .name").all_text_contents()
        assert labels and not [label for label in labels if "_" in label], labels
    finally:
        context.close()


def test_stamps_are_not_checked_without_the_vendored_library(pages: Pages, page: object) -> None:
    page.route("**/vendor/pkijs.bundle.js", lambda route: route.abort())
    result = pages.open(page, "site-tsa", site_with_tsa(pages), "forged-token")
    assert result["verdict"] == "valid", result  # adds nothing, takes nothing
    assert "rfc3161" not in result["checks"]
    assert field(page, "rfc3161-0").startswith("not checked in this browser")
    assert field(page, "earliest-time") == "none"


def test_publish_serves_the_vendored_library_with_its_licences(pages: Pages, page: object) -> None:
    from crovia_spider.web.site import PAGE_ASSETS, page_asset

    vendored = [name for name in PAGE_ASSETS if name.startswith("vendor/")]
    assert {"vendor/pkijs.bundle.js", "vendor/LICENSES/pkijs.LICENSE"} <= set(vendored)
    assert "vendor/LICENSES/asn1js.LICENSE" in vendored
    for name in vendored:
        assert (pages.directory / "v" / name).read_bytes() == page_asset(name)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    pages.open(page, "site-tsa", site_with_tsa(pages), "genuine-token")
    bundle = [url for url in requested if url.endswith("/vendor/pkijs.bundle.js")]
    assert bundle and all(url.startswith(pages.base) for url in requested), requested


def test_the_sites_own_page_after_a_rotation(page: object, tmp_path: Path) -> None:
    """Observation 3 end to end: receipts published before `rotate-key` stay valid on the site's
    own page, published again after it (the trust root `crovia publish` embeds names the
    rotation); receipts after it are valid under the new key. Needs v16-cli's publish."""
    import nacl.signing

    ledger_dir, public = tmp_path / "ledger", tmp_path / "public"
    with Ledger.open(ledger_dir, signing_key=TEST_KEY) as ledger:
        first = ledger.issue([sample_envelope(n) for n in range(3)])
        ledger.seal()
    publish(ledger_dir, public)
    with Ledger.open(ledger_dir, signing_key=TEST_KEY) as ledger:
        record = ledger.rotate_key(nacl.signing.SigningKey(c.NEW_KEY.encode()))
        second = ledger.issue([sample_envelope(n) for n in range(3, 5)])
        ledger.seal()
    publish(ledger_dir, public)
    server = Server(public)
    try:
        page.goto(server.base + f"v/{first[0].axiom_id}")
        result = verdict_of(page)
        assert result["verdict"] == "valid", result
        assert result["key"] == "previous"
        assert f"previous key {record['old_key_id']}" in banner(page)
        page.goto(server.base + f"v/{second[-1].axiom_id}")
        after = verdict_of(page)
        assert after["verdict"] == "valid" and after["key"] == "site", after
    finally:
        server.stop()
