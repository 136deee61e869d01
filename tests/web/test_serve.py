"""`crovia serve` serves a published directory and nothing outside it."""

from __future__ import annotations

import http.client
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from crovia_spider.web.serve import CONTENT_SECURITY_POLICY
from tests.crawl import BIN
from tests.web.conftest import Server

AXIOM_ID = "axm_" + "ab" * 32


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("serve")
    site = root / "public"
    (site / "v").mkdir(parents=True)
    (site / "v" / "index.html").write_text("<p>page</p>")
    (site / "receipts").mkdir()
    (site / "receipts" / f"{AXIOM_ID}.json").write_text("{}")
    (site / "receipts" / ".published.json").write_text("{}")
    (site / "tile").mkdir()
    (root / "secret.txt").write_text("outside")
    (site / "inside-link.json").symlink_to(site / "receipts" / f"{AXIOM_ID}.json")
    (site / "outside-link.txt").symlink_to(root / "secret.txt")
    (site / "outside-dir").symlink_to(root)
    server = Server(site)
    try:
        yield server.base, site
    finally:
        server.stop()


def get(base: str, raw_path: str, method: str = "GET") -> http.client.HTTPResponse:
    """Send `raw_path` exactly as written (no client-side normalisation)."""
    where = urlsplit(base)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    connection.putrequest(method, raw_path, skip_accept_encoding=True)
    connection.endheaders()
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


def test_the_verifier_path_serves_the_page_with_a_strict_policy(served) -> None:
    base, _site = served
    for path in (f"/v/{AXIOM_ID}", "/v/", "/v/index.html"):
        response = get(base, path)
        assert response.status == 200, path
        assert response.body == b"<p>page</p>"
        assert response.getheader("Content-Security-Policy") == CONTENT_SECURITY_POLICY
        assert response.getheader("Content-Type").startswith("text/html")
        assert response.getheader("X-Content-Type-Options") == "nosniff"
    receipt = get(base, f"/receipts/{AXIOM_ID}.json")
    assert (receipt.status, receipt.getheader("Content-Type")) == (200, "application/json")
    assert get(base, "/inside-link.json").status == 200  # a link that stays inside is a file


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/v/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/v/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/receipts%2f..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "/outside-link.txt",
        "/outside-dir/secret.txt",
        "/receipts/",
        "/receipts",
        "/tile/",
        "/",
        "//etc/passwd",
        "/receipts/.published.json",
        "/v/index.html%00.json",
        "/v/axm_" + "AB" * 32,
        "secret.txt",
    ],
)
def test_anything_outside_or_not_a_file_is_not_found(served, path: str) -> None:
    response = get(served[0], path)
    assert response.status == 404, path
    assert b"outside" not in response.body


def test_it_is_read_only(served) -> None:
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        assert get(served[0], "/v/index.html", method).status == 405


def test_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BIN / "crovia"), "serve", str(tmp_path / "missing"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "is not a directory" in done.stderr


IMMUTABLE = "public, max-age=31536000, immutable"


def test_full_tiles_and_bundles_are_immutable_the_checkpoint_and_partial_tiles_no_cache(
    tmp_path: Path,
) -> None:
    """Issue 16, obs 8: tlog-tiles says full tiles never change and may be cached for long; the
    checkpoint and partial tiles change and must be revalidated."""
    import nacl.signing

    from ledger.publish import publish
    from tests.ledger.conftest import Log

    log = Log(tmp_path / "ledger", tmp_path / "pub", nacl.signing.SigningKey.generate())
    log.grow(300)
    publish(log.ledger_dir, log.pub)
    server = Server(log.pub)
    try:
        for path in ("/tile/0/000", "/tile/entries/000"):
            response = get(server.base, path)
            assert response.status == 200, path
            assert response.getheader("Cache-Control") == IMMUTABLE, path
        for path in (
            "/checkpoint",
            "/tile/0/001.p/44",
            "/tile/entries/001.p/44",
            "/tile/1/000.p/1",
            "/rotations.json",
            "/seals/000",
        ):
            response = get(server.base, path)
            assert response.status == 200, path
            assert response.getheader("Cache-Control") == "no-cache", path
        assert get(server.base, "/tile/0/002").status == 404  # not published: no header needed
    finally:
        server.stop()


def test_the_nginx_example_caches_as_crovia_serve_does() -> None:
    text = (Path(__file__).parents[2] / "docs" / "verifier.md").read_text()
    assert f'"{IMMUTABLE}"' in text and 'default "no-cache"' in text
    assert "add_header Cache-Control $crovia_cache always;" in text
    from crovia_spider.web.serve import FULL_TILE

    assert FULL_TILE.pattern.decode() in text.replace("(entries|", "(?:entries|").replace(
        "(x[0-9]{3}/)", "(?:x[0-9]{3}/)"
    )
