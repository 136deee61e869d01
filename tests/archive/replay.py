"""What the replay tests share: pywb serving an exported WACZ on 127.0.0.1, and Chromium opening
its pages with every request outside pywb refused and counted.

pywb lives in a venv of its own (`make pywb`: its pins would break the project's venv), found
at $CROVIA_PYWB_BIN (the Makefile exports it).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.scratch import PROJECT_ROOT, bare_env
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, INSTALL_HINT

PYWB_BIN = Path(os.environ.get("CROVIA_PYWB_BIN") or PROJECT_ROOT / ".venv-pywb" / "bin")
PYWB_HINT = "make pywb   (it runs: python3 -m venv .venv-pywb && .venv-pywb/bin/pip install pywb)"
COLLECTION = "crovia"
T = TypeVar("T")


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


@contextlib.contextmanager
def wayback(wacz: Path, tmp_path: Path) -> Iterator[str]:
    """pywb serving `wacz` (collection COLLECTION, under `tmp_path`/pywb) on 127.0.0.1 while the
    block runs: its base URL. Fails the test when pywb or Chromium is not installed."""
    if not (PYWB_BIN / "wayback").exists():
        pytest.fail(f"pywb is not installed at {PYWB_BIN}: run `{PYWB_HINT}`")
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: run `{INSTALL_HINT}`")
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
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def in_chromium(base: str, look: Callable[[Any], T]) -> tuple[T, list[str]]:
    """`look` run on a new Chromium page whose every request outside `base` is refused: what it
    returns, and the URLs refused. From a thread of its own: Playwright's sync API refuses a
    thread where an asyncio loop runs, and an earlier test of the same pytest worker may have
    left one marked running in this thread."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(_in_chromium, base, look).result(timeout=300)


def _in_chromium(base: str, look: Callable[[Any], T]) -> tuple[T, list[str]]:
    from playwright.sync_api import sync_playwright

    elsewhere: list[str] = []

    def only_base(route: Any) -> None:
        if route.request.url.startswith(base + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", only_base)
            return look(page), elsewhere
        finally:
            browser.close()
