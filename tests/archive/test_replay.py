"""An exported WACZ replays: pywb serves it on 127.0.0.1 and Chromium shows the captured page.

Everything stays on loopback: every request the browser makes elsewhere is refused and counted,
and the test fails if there is one (tests/archive/replay.py).
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from tests.archive.captures import ALPHA_TITLE
from tests.archive.replay import COLLECTION, in_chromium, wayback
from tests.scratch import BIN, PROJECT_ROOT, bare_env


@pytest.mark.slow
def test_an_exported_wacz_replays_in_pywb_with_its_captured_title(made, tmp_path):
    wacz = tmp_path / "page.wacz"
    done = subprocess.run(
        [str(BIN / "crovia"), "export", made.captures["gzip"]["axiom_id"], "--wacz", str(wacz),
         "--ledger-dir", str(made.directory)],
        cwd=PROJECT_ROOT, env=bare_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with wayback(wacz, tmp_path) as base:
        (title, replayed), elsewhere = in_chromium(base, lambda page: _titles(page, base))
    assert elsewhere == []
    assert replayed == ALPHA_TITLE  # the page as captured (gzip-encoded, kept decoded)
    assert title == f"Archived Page: {ALPHA_TITLE}"  # pywb's banner frame names it too


def _titles(page: Any, base: str) -> tuple[str, str]:
    """(the top page's title, the replayed page's title)."""
    page.goto(f"{base}/{COLLECTION}/20260618050000/https://news.example/a")
    # The banner frame takes the replayed page's title once that page has loaded.
    page.wait_for_function(f"document.title.endsWith({ALPHA_TITLE!r})")
    (frame,) = [f for f in page.frames if "mp_/https://news.example/a" in f.url]
    return page.title(), frame.title()
