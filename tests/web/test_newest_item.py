"""Issue 33, observation 2: `crovia publish` and `crovia serve` point a person to the newest item
receipt (AX.OBS), not to the fetch records a crawl signs after it; with no item in the log they
point to the newest receipt and say it is a feed fetch record."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.conftest import Server, publish
from tests.web.test_page_fetch_record import fetch_ledger

pytestmark = pytest.mark.slow


def serve_lines(directory: Path) -> list[str]:
    server = Server(directory)  # reads the first line, "serving DIR at URL"
    try:
        return [server.process.stdout.readline().strip()]
    finally:
        server.stop()


def test_publish_and_serve_point_to_the_newest_item_not_a_fetch_record(tmp_path: Path) -> None:
    leaves = fetch_ledger(tmp_path / "ledger")
    (line,) = [x for x in publish(tmp_path / "ledger", tmp_path / "public") if "/v/" in x]
    assert line.startswith(f"the newest item receipt in the browser: /v/{leaves.item} "), line
    (line,) = serve_lines(tmp_path / "public")
    assert line.startswith("verify the newest item receipt: http://127.0.0.1:"), line
    assert line.endswith(f"/v/{leaves.item}"), line


def test_with_no_item_they_name_the_fetch_record_as_one(tmp_path: Path) -> None:
    leaves = fetch_ledger(tmp_path / "ledger", with_item=False)
    (line,) = [x for x in publish(tmp_path / "ledger", tmp_path / "public") if "/v/" in x]
    assert "a feed fetch record" in line and f"/v/{leaves.fetched} " in line, line
    (line,) = serve_lines(tmp_path / "public")
    assert "a feed fetch record" in line and line.endswith(f"/v/{leaves.fetched}"), line
