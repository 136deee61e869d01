"""No Chromium outlives a crawl (issue 45): killed while a page renders, stopped by signals, or
ending normally, a crawl leaves no process of its browser session, and the next crawl runs.

Real `crovia crawl`s on loopback of a page whose one script never answers, so the browser is
rendering when the crawl is killed. A session's processes are found by the token its browser
process carries in its environment (CROVIA_BROWSER_SESSION, crovia_spider/capture/chromium.py),
and its descendants: its zygotes and renderers, whose environment Chromium overwrites. Each of
them, as seen while the page renders (renderers among them), is gone after the crawl.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from crovia_spider.capture.chromium import SESSION_ENV, session_identities, session_processes
from tests.capture.browser_site import script_site
from tests.crawl import BIN, FAST_SETTINGS, PROJECT_ROOT, crawl_env, run_crawl, write_feeds
from tests.feedserver import FeedServer
from tests.proctree import Process, alive, cmdline, descendants

pytestmark = pytest.mark.slow
SLOW_PAGE = ("-s", "CROVIA_BROWSER_SECONDS=60", "-s", "RETRY_TIMES=0")


def wait_until(check, seconds: float, what: str) -> None:
    """Poll `check` (a process's state, which nothing else signals) until true, or fail."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(what)
        time.sleep(0.1)


def session_of(pid: int) -> str:
    """The browser session token of a process under `pid` ("" while there is none)."""
    for child, _ in descendants(pid):
        with contextlib.suppress(OSError):
            for pair in Path(f"/proc/{child}/environ").read_bytes().split(b"\0"):
                if pair.startswith(SESSION_ENV.encode() + b"="):
                    return pair.split(b"=", 1)[1].decode()
    return ""


def seen_rendering(token: str) -> set[Process]:
    """The session's processes while it renders: a renderer among them, or the session's
    processes are not all found."""
    seen = session_identities(token)
    assert any(b"--type=renderer" in cmdline(p) for p in seen), "no renderer of it was found"
    return seen


def all_gone(seen: set[Process]) -> bool:
    return not any(alive(p) for p in seen)


def start(tmp_path: Path, argv: list[str]) -> subprocess.Popen:
    # a file: a process outliving the crawl (the bug) holds no pipe of the test's
    with (tmp_path / "crawl.log").open("w") as log:
        return subprocess.Popen(
            argv, cwd=PROJECT_ROOT, env=crawl_env(tmp_path), stdout=log, stderr=log
        )


def rendering(tmp_path: Path, server: FeedServer, argv: list[str]) -> tuple[subprocess.Popen, str]:
    """A crawl started with `argv`, once its browser renders the slow page: (it, its session)."""
    crawl = start(tmp_path, argv)
    token = ""

    def busy() -> bool:
        nonlocal token
        token = token or session_of(crawl.pid)
        return bool(token) and bool(server.requests_for("static/never.js"))

    try:
        wait_until(busy, 120, "the browser never rendered the page")
    except BaseException:
        crawl.kill()
        raise
    return crawl, token


def slow_site(tmp_path: Path, server: FeedServer, other: FeedServer, third: FeedServer) -> None:
    write_feeds(tmp_path / "feeds.toml", script_site(server, other, third, listed=("slow",)))


def test_no_chromium_outlives_a_killed_crovia_crawl_and_the_next_crawl_runs(tmp_path):
    with FeedServer() as server, FeedServer() as other, FeedServer() as third:
        slow_site(tmp_path, server, other, third)
        argv = [str(BIN / "crovia"), "crawl", *FAST_SETTINGS, *SLOW_PAGE]
        crawl, token = rendering(tmp_path, server, argv)
        seen = seen_rendering(token)
        crawl.kill()  # SIGKILL of the crawl's parent: its scrapy crawl dies with it
        crawl.wait()
        try:
            wait_until(lambda: all_gone(seen), 30, "a Chromium outlived it")
        finally:
            for pid, _ in filter(alive, seen):
                os.kill(pid, signal.SIGKILL)
        again = run_crawl(tmp_path, None, "-s", "CROVIA_BROWSER_SECONDS=3", timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    (token,) = re.findall(r"browser session ([0-9a-f]{16}):", again.stderr)
    assert session_processes(token) == []


def test_no_chromium_outlives_a_crawl_stopped_by_two_signals(tmp_path):
    with FeedServer() as server, FeedServer() as other, FeedServer() as third:
        slow_site(tmp_path, server, other, third)
        argv = [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST_SETTINGS, *SLOW_PAGE]
        crawl, token = rendering(tmp_path, server, argv)
        seen = seen_rendering(token)
        crawl.send_signal(signal.SIGTERM)  # a graceful stop, said in the log once handled
        log = tmp_path / "crawl.log"
        wait_until(lambda: "stopping: no new fetches" in log.read_text(), 30, "no graceful stop")
        crawl.send_signal(signal.SIGTERM)  # the second: Scrapy's forced stop
        try:
            crawl.wait(timeout=60)
            wait_until(lambda: all_gone(seen), 30, "a Chromium outlived it")
        finally:
            crawl.kill()
            for pid, _ in filter(alive, seen):
                os.kill(pid, signal.SIGKILL)
