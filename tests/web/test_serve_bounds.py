"""`crovia serve` bounds the time to read a request and the connections it holds open.

Real sockets on loopback against `crovia serve` as a child process. Clients that send their
request head one byte at a time (each byte would start Twisted's idle timeout again) are closed
at the request deadline with a 408, while ordinary requests made meanwhile are answered; past
the connection ceilings (in all, and from one address) a connection is closed as soon as it is
accepted, and one freed slot takes a new one. Deadlines here are a few seconds; the times
asserted are a lower bound the server cannot beat and a generous upper one.
"""

from __future__ import annotations

import http.client
import selectors
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from crovia_spider.web import bounded
from tests.crawl import BIN, PROJECT_ROOT

DEADLINE = 2.0
DRIPPERS = 50
DRIP_EVERY = 0.4
MARGIN = 15.0  # seconds past the deadline a dripper may still be open: a loaded machine


class Serve:
    """`crovia serve DIR --port 0 ARGS...`; `port` is the port it printed."""

    def __init__(self, directory: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "crovia"), "serve", str(directory), "--port", "0", *args],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        if not line.startswith("serving "):
            self.stop()
            raise RuntimeError(f"crovia serve did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1].strip().rstrip("/"))

    def stop(self) -> None:
        self.process.terminate()
        self.process.communicate(timeout=20)

    def get(self, path: str = "/v/") -> int:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("bounds") / "public"
    (site / "v").mkdir(parents=True)
    (site / "v" / "index.html").write_text("<p>page</p>")
    return site


@pytest.fixture
def serve(published: Path) -> Iterator[Callable[..., Serve]]:
    started: list[Serve] = []

    def start(*args: str) -> Serve:
        started.append(Serve(published, *args))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.setblocking(False)
    return sock


@pytest.mark.slow
def test_dripping_clients_are_closed_at_the_deadline_while_requests_are_answered(serve):
    server = serve(
        "--request-seconds", str(DEADLINE), "--max-connections", "64", "--max-per-address", "64"
    )  # fmt: skip
    started = time.monotonic()
    drippers = {
        connect(server.port): b"GET /v/ HTTP/1.1\r\nHost: x\r\nX-Drip: " for _ in range(DRIPPERS)
    }
    opened = time.monotonic()
    answers: dict[socket.socket, bytes] = {sock: b"" for sock in drippers}
    closed_at: dict[socket.socket, float] = {}
    served = []
    selector = selectors.DefaultSelector()
    for sock in drippers:
        selector.register(sock, selectors.EVENT_READ)
    next_drip = time.monotonic()
    while len(closed_at) < DRIPPERS and time.monotonic() < opened + DEADLINE + MARGIN:
        if time.monotonic() >= next_drip:
            for sock, pending in drippers.items():
                if sock not in closed_at and pending:
                    try:
                        sock.send(pending[:1])  # one byte: it would restart an idle timeout
                    except OSError:
                        continue
                    drippers[sock] = pending[1:] or b"a"
            next_drip += DRIP_EVERY
            served.append(server.get())  # an ordinary request, answered meanwhile
        for key, _ in selector.select(timeout=0.05):
            sock = key.fileobj
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            answers[sock] += data
            if not data:
                closed_at[sock] = time.monotonic()
                selector.unregister(sock)
    for sock in drippers:
        sock.close()
    assert len(closed_at) == DRIPPERS, f"{DRIPPERS - len(closed_at)} dripping clients still open"
    # Not before the deadline, counted from each connection's start, and not long after it.
    assert min(closed_at.values()) >= started + DEADLINE
    assert max(closed_at.values()) <= opened + DEADLINE + MARGIN
    assert all(
        answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n") for answer in answers.values()
    )
    assert len(served) >= 3 and set(served) == {200}
    assert server.get() == 200


@pytest.mark.slow
def test_connections_past_the_ceilings_are_closed_on_accept(serve):
    server = serve("--max-connections", "10", "--max-per-address", "6", "--request-seconds", "60")
    held = [connect(server.port) for _ in range(6)]
    over_address = connect(server.port)  # a 7th from 127.0.0.1
    elsewhere = [connect(server.port, "127.0.0.2") for _ in range(4)]  # 10 in all
    over_total = connect(server.port, "127.0.0.2")
    for sock in (over_address, over_total):
        assert _closed_by_server(sock)
    # Every connection held is a connection served.
    for sock in [*held, *elsewhere]:
        sock.setblocking(True)
        sock.sendall(b"GET /v/ HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(64).startswith(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises((ConnectionError, http.client.RemoteDisconnected)):
        server.get()  # the site is full
    held.pop().close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until the server has seen the close
        try:
            assert server.get() == 200
            break
        except (ConnectionError, http.client.RemoteDisconnected):
            time.sleep(0.05)
    else:
        pytest.fail("a freed connection slot was never taken again")
    for sock in [*held, *elsewhere, over_address, over_total]:
        sock.close()


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed `sock` without a byte (EOF or reset) within 10 s."""
    sock.setblocking(True)
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_the_command_line_defaults_are_the_servers():
    """`crovia serve --help` states the defaults of crovia_spider/web/bounded.py."""
    shown = subprocess.run(
        [str(BIN / "crovia"), "serve", "--help"], capture_output=True, text=True, timeout=30
    ).stdout
    said = " ".join(shown.split())
    assert f"({bounded.REQUEST_SECONDS})" in said
    assert f"closed on accept ({bounded.MAX_CONNECTIONS})" in said
    assert f"one client address ({bounded.MAX_PER_ADDRESS})" in said
