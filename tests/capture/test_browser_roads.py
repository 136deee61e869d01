"""Nothing a browser-captured page asks for leaves the fetch policy by another road (issue 45): a
WebSocket, a service worker, a prefetch, a preconnect, a DNS prefetch and a redirect to another
loopback port are refused or end at the dead proxy, and are listed; the other server sees no
request and not even a connection. One real crawl on loopback.
"""

from __future__ import annotations

import json
import socket
import threading

import pytest

from ledger.store import BodyStore
from tests.capture.browser_site import HTML, page
from tests.crawl import leaves, run_crawl
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow


class Listener:
    """A loopback port that counts every connection made to it (and answers none)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.accepted = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.stopped.set()
        self.thread.join()
        self.sock.close()


def test_other_roads_are_closed_and_listed(tmp_path):
    listener = Listener()
    elsewhere = f"127.0.0.1:{listener.port}"
    roads = (
        f"<link rel='prefetch' href='http://{elsewhere}/prefetched'>"
        f"<link rel='preconnect' href='http://{elsewhere}'>"
        f"<link rel='dns-prefetch' href='http://{elsewhere}'>"
        "<img src='/hop.png' alt=''>"
    )
    script = (
        "<script>"
        f"try {{ new WebSocket('ws://{elsewhere}/socket'); }} catch (e) {{}}"
        "navigator.serviceWorker && navigator.serviceWorker.register('/sw.js').catch(() => 0);"
        "</script>"
    )
    try:
        with FeedServer() as server:
            server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
            card = '<li class="card"><a href="/articles/roads">roads</a></li>'
            server.script("news", Reply(body=f"<html><body><ul>{card}</ul></body></html>".encode()))
            server.script("articles/roads", Reply(body=page("Roads", roads, script), headers=HTML))
            moved = {"Location": f"http://{elsewhere}/moved.png"}
            server.script("hop.png", Reply(status=302, headers=moved))
            server.script("sw.js", Reply(body=b"self.onfetch = () => 0;"))
            feeds = (
                f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
                'capture = "browser"\nselectors = { item = "li.card", link = "a", title = "a" }\n'
            )
            done = run_crawl(tmp_path, feeds, "-s", "CROVIA_BROWSER_SECONDS=5")
            asked = [r.path for r in server.requests]
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert listener.accepted == 0  # not a request, not even a connection
    assert "/sw.js" not in asked  # a service worker is never even fetched
    (capture,) = [e for e in leaves(tmp_path) if e["body"].get("mode") == "browser"]
    manifest = BodyStore(tmp_path / "ledger").get(capture["body"]["browser"]["exchanges_sha256"])
    refused = {e["url"]: e["refused"] for e in json.loads(manifest)["exchanges"] if "refused" in e}
    assert refused[f"ws://{elsewhere}/socket"] == "WebSockets are not opened by browser captures"
    assert "127.0.0.1 is a loopback address" in refused[f"http://{elsewhere}/moved.png"]
    hop = next(e for e in json.loads(manifest)["exchanges"] if e["url"].endswith("/hop.png"))
    assert (hop["status"], hop["redirect_to"]) == (302, f"http://{elsewhere}/moved.png")
    assert refused[f"http://{elsewhere}/prefetched"] == "a prefetch: not made by browser captures"
    assert capture["body"]["browser"]["verdict"] == "partial"
