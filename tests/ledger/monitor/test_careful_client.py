"""`crovia monitor` as a careful client of a hostile log server on 127.0.0.1 (issue 19, obs 8):
a log that misbehaves (a redirect off its origin, a missed deadline, an oversized answer, a gzip
bomb, a malformed file) fails the check, exit 1, naming the file; only an unreachable log exits 2.
No proxy is used unless `--proxy` names one. Issue 16 obs 7: a bad tile names its leaves and the
sizes being checked, a bad entry its leaf."""

from __future__ import annotations

import contextlib
import gzip
import os
import socket
import subprocess
import threading
from collections.abc import Iterator

import pytest

from ledger.publish import publish
from tests.crawl import BIN, PROJECT_ROOT
from tests.feedserver import FeedServer, Reply
from tests.ledger.conftest import Log


def crovia_monitor(log: Log, source: str, *args: str, env: dict[str, str] | None = None):
    environment = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    environment.update(env or {})
    return subprocess.run(
        [str(BIN / "crovia"), "monitor", source, "--vkey", log.vkey, *args],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def served(log: Log) -> Iterator[FeedServer]:
    """A log of 300 leaves (two seals), published and served over HTTP on 127.0.0.1."""
    log.grow(100)
    log.grow(200)
    publish(log.ledger_dir, log.pub)
    with FeedServer(log.pub) as server:
        yield server


def failed(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    for word in words:
        assert word in result.stderr, result.stderr


def test_an_honest_log_over_http_passes(log: Log, served: FeedServer) -> None:
    result = crovia_monitor(log, served.base)
    assert result.returncode == 0, result.stderr
    assert "size 300" in result.stdout


def test_a_redirect_within_the_origin_is_followed(log: Log, served: FeedServer) -> None:
    served.script("/checkpoint", Reply(302, b"", {"Location": "/moved/checkpoint"}))
    served.script("/moved/checkpoint", Reply(200, (log.pub / "checkpoint").read_bytes()))
    assert crovia_monitor(log, served.base).returncode == 0


def test_a_redirect_to_another_port_is_a_failed_check(log: Log, served: FeedServer) -> None:
    with FeedServer(log.pub) as other:
        served.script("/tile/0/001.p/44", Reply(302, b"", {"Location": other.url("x")}))
        failed(crovia_monitor(log, served.base), "tile/0/001.p/44", "off the log's origin")
        assert other.requests == []


def test_a_redirect_to_another_loopback_host_is_not_followed(log: Log, served: FeedServer) -> None:
    with socket.socket() as listener:
        try:
            listener.bind(("127.0.0.2", 0))
        except OSError:
            pytest.skip("127.0.0.2 is not a local address here")
        listener.listen()
        listener.setblocking(False)
        port = served.base.rsplit(":", 1)[1]
        served.script("/checkpoint", Reply(301, b"", {"Location": f"http://127.0.0.2:{port}/c"}))
        failed(crovia_monitor(log, served.base), "checkpoint", "off the log's origin")
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_proxy_variables_are_ignored_and_proxy_is_used_when_asked(
    log: Log, served: FeedServer
) -> None:
    with FeedServer(log.pub) as proxy:  # serves absolute-URL requests from the same directory
        env = {"http_proxy": proxy.base, "HTTP_PROXY": proxy.base, "no_proxy": ""}
        assert crovia_monitor(log, served.base, env=env).returncode == 0
        assert proxy.requests == []
        served.clear()
        result = crovia_monitor(log, served.base, "--proxy", proxy.base)
        assert result.returncode == 0, result.stderr
        assert proxy.requests and served.requests == []


class DripServer:
    """Answers every request with headers, then one byte of its body every `every` seconds."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.threads = [threading.Thread(target=self._serve, daemon=True)]
        self.threads[0].start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            dripping = threading.Thread(target=self._drip, args=(conn,), daemon=True)
            self.threads.append(dripping)
            dripping.start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                while not self.stop.wait(self.every):
                    conn.sendall(b"x")
            except OSError:
                return

    def close(self) -> None:
        """Stop dripping and accepting, and wait for it: no thread outlives the test."""
        self.stop.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self.listener.close()
        for thread in self.threads:
            thread.join(timeout=5)
        assert not any(thread.is_alive() for thread in self.threads)


def test_a_log_that_drips_misses_the_deadline(log: Log) -> None:
    drip = DripServer(every=0.5)  # 1,000 bytes would take 500 s
    try:
        result = crovia_monitor(log, drip.base, "--timeout", "2")
    finally:
        drip.close()
    # the first file a run reads is rotations.json (the key chain), then the checkpoint
    failed(result, "rotations.json", "deadline")


def test_an_oversized_answer_is_a_failed_check(log: Log, served: FeedServer) -> None:
    served.script("/tile/0/001.p/44", Reply(200, b"\x00" * 9000))
    failed(crovia_monitor(log, served.base), "tile/0/001.p/44", "more than 8192")


def test_a_gzip_bomb_is_a_failed_check(log: Log, served: FeedServer) -> None:
    bomb = gzip.compress(b"\x00" * (200 << 20), compresslevel=9)
    assert len(bomb) < 300_000
    served.script("/tile/entries/001.p/44", Reply(200, bomb, {"Content-Encoding": "gzip"}))
    failed(crovia_monitor(log, served.base), "tile/entries/001.p/44", "decompresses to more")


def test_a_broken_gzip_answer_is_a_failed_check(log: Log, served: FeedServer) -> None:
    served.script("/checkpoint", Reply(200, b"\x1f\x8bnot gzip", {"Content-Encoding": "gzip"}))
    failed(crovia_monitor(log, served.base), "checkpoint", "gzip")


@pytest.mark.parametrize(
    ("path", "body"),
    [("/checkpoint", b"not a checkpoint\n"), ("/tile/0/001.p/44", b"\x00" * 31)],
)
def test_a_malformed_file_is_a_failed_check_naming_it(
    log: Log, served: FeedServer, path: str, body: bytes
) -> None:
    served.script(path, Reply(200, body))
    failed(crovia_monitor(log, served.base), path.lstrip("/"))


def test_an_http_refusal_is_a_failed_check(log: Log, served: FeedServer) -> None:
    served.script("/tile/entries/001.p/44", Reply(403, b"no"))
    failed(crovia_monitor(log, served.base), "tile/entries/001.p/44", "HTTP 403")


def test_only_an_unreachable_log_exits_2(log: Log) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: refused
        result = crovia_monitor(log, f"http://127.0.0.1:{port}/")
    assert result.returncode == 2, result.stderr
    assert "unreachable" in result.stderr


def test_a_changed_byte_in_a_level_0_tile_names_leaves_and_sizes(log: Log, served) -> None:
    data = bytearray((log.pub / "tile/0/001.p/44").read_bytes())
    data[32 * 5 + 3] ^= 1
    served.script("/tile/0/001.p/44", Reply(200, bytes(data)))
    failed(
        crovia_monitor(log, served.base),
        "tile/0/001.p/44",
        "leaves 256-299",
        "leaf 261",
        "from size 0 to size 300",
    )


def test_a_changed_entry_names_its_leaf(log: Log, served: FeedServer) -> None:
    bundle = bytearray((log.pub / "tile/entries/001.p/44").read_bytes())
    at = bundle.index(b'"title"')
    bundle[at + 10] ^= 1
    served.script("/tile/entries/001.p/44", Reply(200, bytes(bundle)))
    failed(crovia_monitor(log, served.base), "leaf 256")


def test_a_too_long_directory_file_is_a_failed_check(log: Log, served: FeedServer) -> None:
    (log.pub / "tile/0/001.p/44").write_bytes(b"\x00" * 9000)
    failed(crovia_monitor(log, str(log.pub)), "tile/0/001.p/44", "longer than 8192")


def test_gzip_answers_of_incompressible_full_tiles_pass(log: Log, served: FeedServer) -> None:
    """A full tile of hashes does not compress: its gzip is a little longer than the limit."""
    log.grow(300)
    publish(log.ledger_dir, log.pub)
    full = (log.pub / "tile/0/000").read_bytes()
    squeezed = gzip.compress(full)
    assert len(full) == 8192 < len(squeezed)
    served.script("/tile/0/000", Reply(200, squeezed, {"Content-Encoding": "gzip"}))
    result = crovia_monitor(log, served.base)
    assert result.returncode == 0, result.stderr
    assert served.requests_for("/tile/0/000")
