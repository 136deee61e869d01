"""The deadline of our HTTP clients holds however a server answers (issue 30, obs 7).

`crovia monitor --timeout 10` against a log answering HTTP/1.0 or `Connection: close` and dripping
one byte every 2 s ran until killed: http.client hands the socket to such a response and sets
`connection.sock` to None, so the watchdog had nothing to shut down. Each way a server can answer
is served here by a dripping server on 127.0.0.1, and a real `crovia monitor` must give up with
its deadline error (exit 1, naming the file) within its timeout plus a generous margin. The other
clients of ours with a deadline (`crovia stamp`'s transport, the witness client) are held to the
same, in-process against the same server.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from crovia_spider.fetching.stamp_http import HttpTransport
from crovia_spider.services.witness_client import collect_cosignatures
from ledger.exceptions import StampTransportError
from tests.crawl import BIN, PROJECT_ROOT
from tests.ledger.conftest import Log
from tests.ledger.monitor.test_careful_client import DripServer, failed

TIMEOUT = 2.0
EVERY = 0.4  # one byte every 0.4 s: each read returns long before any socket timeout
MARGIN = 20.0  # process start and import on a loaded machine; a hang is minutes, not seconds

# (the answer's head, the bytes dripped one at a time after it, forever)
WAYS = {
    "http/1.0 body": (b"HTTP/1.0 200 OK\r\n\r\n", b"x"),
    "http/1.0 content-length": (b"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\n\r\n", b"x"),
    "connection close": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n",
        b"x",
    ),
    "connection close, no length": (b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", b"x"),
    "keep-alive content-length": (b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", b"x"),
    "chunked": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"1\r\nx\r\n"),
    "chunked, connection close": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        b"1\r\nx\r\n",
    ),
    "headers dripped": (b"HTTP/1.1 200 OK\r\n", b"X-Slow: y\r\n"),
    "http/1.0 headers dripped": (b"HTTP/1.0 200 OK\r\n", b"X-Slow: y\r\n"),
    "status line dripped": (b"", b"H"),
}


class WayServer(DripServer):
    """A DripServer that answers with `head`, then drips `unit` one byte at a time, forever."""

    def __init__(self, head: bytes, unit: bytes) -> None:
        self.head, self.unit = head, unit
        super().__init__(every=EVERY)

    def _drip(self, conn) -> None:
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(self.head)
                sent = 0
                while not self.stop.wait(self.every):
                    conn.sendall(self.unit[sent % len(self.unit) :][:1])
                    sent += 1
            except OSError:
                return


@pytest.fixture(params=sorted(WAYS))
def way(request):
    server = WayServer(*WAYS[request.param])
    yield server
    server.close()


def test_the_monitor_meets_its_deadline_however_the_log_answers(log: Log, way) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    started = time.monotonic()
    result = subprocess.run(
        [str(BIN / "crovia"), "monitor", way.base, "--vkey", log.vkey, "--timeout", str(TIMEOUT)],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT + MARGIN,  # raises (and kills the monitor) when the deadline did not hold
    )
    assert time.monotonic() - started < TIMEOUT + MARGIN
    failed(result, "rotations.json", "deadline")


def test_the_stamp_transport_meets_its_deadline_however_the_server_answers(way) -> None:
    transport = HttpTransport(timeout=TIMEOUT)
    started = time.monotonic()
    with pytest.raises(StampTransportError, match="timed out"):
        transport.post(way.base + "/tsa", b"q", content_type="x/y", accept="x/z")
    assert time.monotonic() - started < TIMEOUT + MARGIN


def test_the_witness_client_meets_its_deadline_however_the_witness_answers(
    way, caplog: pytest.LogCaptureFixture
) -> None:
    started = time.monotonic()
    cosigned = collect_cosignatures([way.base], b"note\n", 0, 1, lambda size: [], TIMEOUT)
    assert time.monotonic() - started < TIMEOUT + MARGIN
    assert cosigned == []
    assert "did not cosign" in caplog.text and "timed out" in caplog.text


@pytest.fixture
def tls_drip():
    """A server that answers a TLS ClientHello with a record header, then drips its 16 KiB body."""
    server = WayServer(b"\x16\x03\x03\x40\x00", b"\x02")
    server.base = server.base.replace("http://", "https://")
    yield server
    server.close()


def test_a_dripped_tls_handshake_meets_every_deadline(log: Log, tls_drip, caplog) -> None:
    """The socket is the watchdog's from its creation, before TLS wraps it."""
    environment = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    argv = [str(BIN / "crovia"), "monitor", tls_drip.base, "--vkey", log.vkey]
    started = time.monotonic()
    result = subprocess.run(
        [*argv, "--timeout", str(TIMEOUT)],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT + MARGIN,
    )
    failed(result, "rotations.json", "deadline")
    with pytest.raises(StampTransportError, match="timed out"):
        HttpTransport(timeout=TIMEOUT).get(tls_drip.base + "/x", accept="x/y")
    assert collect_cosignatures([tls_drip.base], b"n\n", 0, 1, lambda size: [], TIMEOUT) == []
    assert "timed out" in caplog.text
    assert time.monotonic() - started < 3 * (TIMEOUT + MARGIN)
