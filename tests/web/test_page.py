"""The verifier page in a real Chromium, against a crawled, published and served ledger."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.web.conftest import Site

pytestmark = pytest.mark.slow


def verdict_of(page: object) -> dict[str, object]:
    """Wait for the page's verdict; return it with every check's name and outcome."""
    page.wait_for_selector("#verdict:not([data-verdict='pending'])", timeout=30_000)
    verdict = page.locator("#verdict")
    checks = page.locator("#checks [data-check]")
    return {
        "verdict": verdict.get_attribute("data-verdict"),
        "failed": verdict.get_attribute("data-failed"),
        "key": page.locator("#key-status").get_attribute("data-key"),
        "checks": {
            checks.nth(i).get_attribute("data-check"): checks.nth(i).get_attribute("data-ok")
            for i in range(checks.count())
        },
    }


def test_every_published_receipt_shows_valid_under_the_site_key(site: Site, page: object) -> None:
    assert len(site.axiom_ids) >= 3
    for axiom_id in site.axiom_ids[:3] + site.axiom_ids[-1:]:
        page.goto(site.url(f"/v/{axiom_id}"))
        result = verdict_of(page)
        assert result["verdict"] == "valid", result
        assert result["key"] == "site"
        assert set(result["checks"].values()) == {"true"}
        assert {"canonical_bytes", "axiom_id", "envelope_signature", "leaf_hash"} <= set(
            result["checks"]
        )
        receipt = json.loads((site.directory / "receipts" / f"{axiom_id}.json").read_bytes())
        if receipt["envelope"]["axiom_type"] == "AX.OBS":  # a fetch record has no title
            title = page.locator("[data-field='title']").text_content()
            assert title == receipt["envelope"]["body"]["title"]


def test_the_reference_receipt_passes_its_checks_but_is_another_key(site: Site, page: object):
    page.goto(site.url("/v/?src=/samples/seed.json"))
    result = verdict_of(page)
    assert result["verdict"] == "unpinned"  # amber: never green above a red pinned_key
    assert result["failed"] == "pinned_key"
    assert result["key"] == "other"
    assert result["checks"].pop("pinned_key") == "false"
    assert set(result["checks"].values()) == {"true"}
    assert "ANOTHER key" in page.locator("#key-status").text_content()
    text = page.locator("#verdict").text_content()
    assert "not vouched for by this site" in text.lower()
    assert "every check passed" not in text.lower()


def test_src_from_another_origin_is_refused(site: Site, page: object) -> None:
    for src in ("//example.org/r.json", "http://127.0.0.2/r.json", "javascript:alert(1)"):
        page.goto(site.url("/v/?src=") + src)
        page.wait_for_selector("#verdict[data-verdict='error']", timeout=30_000)


def test_the_page_loads_nothing_from_another_origin(site: Site, page: object) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site.url(f"/v/{site.axiom_ids[0]}"))
    assert verdict_of(page)["verdict"] == "valid"
    assert requested and all(url.startswith(site.base) for url in requested), requested


def test_a_copy_opened_from_disk_verifies_a_dropped_receipt(
    site: Site, page: object, tmp_path: Path
) -> None:
    copy = tmp_path / "saved"
    shutil.copytree(site.directory / "v", copy)
    receipt = (site.directory / "receipts" / f"{site.axiom_ids[0]}.json").read_text("utf-8")
    page.goto(copy.joinpath("index.html").as_uri())
    page.evaluate(
        """(text) => {
            const data = new DataTransfer();
            data.items.add(new File([text], "receipt.json", {type: "application/json"}));
            document.getElementById("drop").dispatchEvent(
                new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
        }""",
        receipt,
    )
    result = verdict_of(page)
    assert result["verdict"] == "valid"
    assert result["key"] == "site"  # the trust root written into the page, not the receipt's


def test_a_browser_without_ed25519_is_told_so(site: Site, page: object) -> None:
    page.add_init_script("Object.defineProperty(globalThis.crypto, 'subtle', {value: undefined})")
    page.goto(site.url(f"/v/{site.axiom_ids[0]}"))
    assert verdict_of(page)["verdict"] == "unsupported"
    assert "cannot verify Ed25519" in page.locator("#verdict").text_content()


HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


def test_receipt_text_is_shown_as_text_never_as_html(page: object, tmp_path: Path) -> None:
    from ledger.envelope import new_envelope
    from ledger.store import Ledger
    from tests.vectors.make_vectors import TEST_KEY, sample_record
    from tests.web.conftest import Server, publish

    record = {**sample_record(1), "title": HOSTILE, "summary_excerpt": HOSTILE}
    with Ledger.open(tmp_path / "ledger", signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([new_envelope(record, issued_at="2026-06-18T04:43:37Z")])
        ledger.seal()
    publish(tmp_path / "ledger", tmp_path / "public")
    server = Server(tmp_path / "public")
    try:
        page.goto(server.base + f"v/{issued.axiom_id}")
        assert verdict_of(page)["verdict"] == "valid"
        assert page.locator("[data-field='title']").text_content() == HOSTILE
        assert page.locator("main img, main script").count() == 0
        assert page.title() != "pwned"
    finally:
        server.stop()
