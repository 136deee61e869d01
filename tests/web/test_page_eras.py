"""The page in Chromium refuses a receipt sealed by a retired key after its hand-over: "invalid",
naming the failed check `key_rotation` (before, it said "Valid ... signed by this site's previous
key ..., handed over to ... at ..."). The same receipts are cases of the differential corpus
(tests/web/corpus_eras.py); here the published page itself, with the site's trust root embedded
the way `crovia publish` embeds it, gives the verdict."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web import corpus_eras
from tests.web.conftest import Server, publish
from tests.web.test_page_verdicts import Pages, banner

pytestmark = pytest.mark.slow

CASES = {
    "by-leaf": "era: A after its hand-over by leaf, pin B",
    "by-time": "era: A after its hand-over by time, pin B",
    "own-chain": "era: B (own key_rotations) after its hand-over",
    "genuine": "era: A's own seal, pin B",
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Pages, dict]]:
    work = tmp_path_factory.mktemp("eras-site")
    with Ledger.open(work / "ledger", signing_key=TEST_KEY) as ledger:
        ledger.issue([sample_envelope(0)])
        ledger.seal()
    directory = work / "public"
    publish(work / "ledger", directory)
    (directory / "samples").mkdir()
    cases = {case.name: case for case in corpus_eras.hostile_cases(work / "cases", None)}
    server = Server(directory)
    result = Pages(directory, server.base, None, {}, b"", None)
    for short, name in CASES.items():
        result.add(short, cases[name].receipt)
    try:
        yield result, {short: cases[name] for short, name in CASES.items()}
    finally:
        server.stop()


@pytest.mark.parametrize("short", ["by-leaf", "by-time", "own-chain"])
def test_a_retired_keys_seal_after_its_hand_over_is_invalid_naming_the_check(
    pages: tuple[Pages, dict], page: object, short: str
) -> None:
    site, cases = pages
    case = cases[short]
    result = site.open(page, f"pin-{short}", case.pin, short)
    assert (result["verdict"], result["failed"]) == ("invalid", "key_rotation"), result
    text = banner(page)
    assert text.startswith('Invalid: the check "key rotation" failed')
    assert "a key is trusted only inside its era" in text
    assert "every check passed" not in text.lower()


def test_the_same_key_inside_its_era_stays_valid(pages: tuple[Pages, dict], page: object) -> None:
    site, cases = pages
    result = site.open(page, "pin-genuine", cases["genuine"].pin, "genuine")
    assert result["verdict"] == "valid", result
    assert result["key"] == "previous"


def test_the_page_names_the_hand_over(pages: tuple[Pages, dict], page: object, tmp_path: Path):
    site, cases = pages
    site.open(page, "pin-by-leaf", cases["by-leaf"].pin, "by-leaf")
    failed = page.locator("#checks [data-check='key_rotation'] .values").text_content()
    assert "leaf_count <= 3" in failed and "leaf_count 6" in failed
