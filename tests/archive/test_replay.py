"""An exported WACZ replays: pywb serves it on 127.0.0.1 and Chromium shows the captured page.

pywb lives in a venv of its own (`make pywb`: its pins would break the project's venv), found
at $CROVIA_PYWB_BIN (the Makefile exports it). Everything stays on loopback: every request the
browser makes elsewhere is refused and counted, and the test fails if there is one.
"""

from __future__ import annotations

import concurrent.futures
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.archive.captures import ALPHA_TITLE
from tests.scratch import BIN, PROJECT_ROOT, bare_env
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, INSTALL_HINT

PYWB_BIN = Path(os.environ.get("CROVIA_PYWB_BIN") or PROJECT_ROOT / ".venv-pywb" / "bin")
PYWB_HINT = "make pywb   (it runs: python3 -m venv .venv-pywb && .venv-pywb/bin/pip install pywb)"
COLLECTION = "crovia"


def pywb(program: str, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PYWB_BIN / program), *map(str, args)],
        cwd=cwd,
        env=bare_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_listener(port: int, server: subprocess.Popen, log: Path) -> None:
    """Return once the server accepts connections on `port` (fail if it exits or takes 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"wayback exited with {server.returncode}: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)  # polling the port: it is the server's only sign of being ready
    pytest.fail(f"wayback did not listen on 127.0.0.1:{port} within 60 s: {log.read_text()}")


@pytest.mark.slow
def test_an_exported_wacz_replays_in_pywb_with_its_captured_title(made, tmp_path):
    if not (PYWB_BIN / "wayback").exists():
        pytest.fail(f"pywb is not installed at {PYWB_BIN}: run `{PYWB_HINT}`")
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: run `{INSTALL_HINT}`")
    wacz = tmp_path / "page.wacz"
    done = subprocess.run(
        [str(BIN / "crovia"), "export", made.captures["gzip"]["axiom_id"], "--wacz", str(wacz),
         "--ledger-dir", str(made.directory)],
        cwd=PROJECT_ROOT, env=bare_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    root = tmp_path / "pywb"
    root.mkdir()
    for step in (("init", COLLECTION), ("add", "--unpack-wacz", COLLECTION, wacz)):
        added = pywb("wb-manager", *step, cwd=root)
        assert added.returncode == 0, added.stdout + added.stderr
    port, log = free_port(), tmp_path / "wayback.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [str(PYWB_BIN / "wayback"), "--bind", "127.0.0.1", "--port", str(port),
             "--directory", str(root)],
            cwd=root, env=bare_env(), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for_listener(port, server, log)
        title, replayed, elsewhere = _open_in_chromium(f"http://127.0.0.1:{port}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert elsewhere == []
    assert replayed == ALPHA_TITLE  # the page as captured (gzip-encoded, kept decoded)
    assert title == f"Archived Page: {ALPHA_TITLE}"  # pywb's banner frame names it too


def _open_in_chromium(base: str) -> tuple[str, str, list[str]]:
    """(the top page's title, the replayed page's title, URLs asked outside `base`), from a
    thread of its own: Playwright's sync API refuses a thread where an asyncio loop runs, and an
    earlier test of the same pytest worker may have left one marked running in this thread."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(_titles_in_chromium, base).result(timeout=300)


def _titles_in_chromium(base: str) -> tuple[str, str, list[str]]:
    from playwright.sync_api import sync_playwright

    elsewhere: list[str] = []

    def loopback_only(route: object) -> None:
        url = route.request.url
        if url.startswith(base + "/"):
            route.continue_()
        else:
            elsewhere.append(url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", loopback_only)
            page.goto(f"{base}/{COLLECTION}/20260618050000/https://news.example/a")
            # The banner frame takes the replayed page's title once that page has loaded.
            page.wait_for_function(f"document.title.endsWith({ALPHA_TITLE!r})")
            (frame,) = [f for f in page.frames if "mp_/https://news.example/a" in f.url]
            return page.title(), frame.title(), elsewhere
        finally:
            browser.close()
