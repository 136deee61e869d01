"""`crovia serve` and `crovia witness serve` refuse a request body before reading it (issue 19,
obs 7): a declared or chunked body over the limit gets 413 and the connection closes, with
nothing written to disk (the services run with TMPDIR in an empty directory, and their open files
are checked); `crovia serve` refuses any body at all."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nacl.signing
import pytest

from ledger.keys import generate_signing_key
from tests.crawl import BIN, PROJECT_ROOT
from tests.ledger.conftest import Log

GIB = 1 << 30


@dataclass
class Service:
    process: subprocess.Popen[str]
    host: str
    port: int
    tmpdir: Path

    def temp_bytes(self) -> int:
        """Bytes in the service's temporary directory, and in every file it holds open there
        (an unlinked temporary file is still on disk while it is open)."""
        total = sum(p.stat().st_size for p in self.tmpdir.rglob("*") if p.is_file())
        fds = Path(f"/proc/{self.process.pid}/fd")
        for fd in fds.iterdir():
            try:
                target = os.readlink(fd)
                if target.startswith(str(self.tmpdir)) or "(deleted)" in target:
                    total += os.stat(fd).st_size
            except OSError:
                continue
        return total


def started(args: list[str], tmp_path: Path, marker: str) -> Service:
    tmpdir = tmp_path / "service-tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    process = subprocess.Popen(
        args, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    line = process.stdout.readline()
    assert marker in line, (line, process.stderr.read() if process.poll() is not None else "")
    url = line.split("http://", 1)[1].split()[0].rstrip("/")
    host, port = url.split("/")[0].rsplit(":", 1)
    return Service(process, host, int(port), tmpdir)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Service]:
    site = tmp_path / "public"
    site.mkdir()
    (site / "checkpoint").write_text("x\n")
    service = started([str(BIN / "crovia"), "serve", str(site), "--port", "0"], tmp_path, "serving")
    yield service
    service.process.terminate()
    service.process.communicate(timeout=20)


@pytest.fixture
def witness(tmp_path: Path) -> Iterator[Service]:
    log = Log(tmp_path / "ledger", tmp_path / "pub", nacl.signing.SigningKey.generate())
    key = tmp_path / "witness.key"
    generate_signing_key(key)
    args = [sys.executable, "-m", "crovia_spider", "witness", "serve", "--key", str(key)]
    args += ["--log", f"{log.origin}={log.vkey}", "--state", str(tmp_path / "state")]
    service = started([*args, "--port", "0"], tmp_path, "listening on")
    yield service
    service.process.terminate()
    service.process.communicate(timeout=20)


def send(service: Service, head: bytes, body: bytes) -> bytes:
    """Send `head` and then as much of `body` as the service takes; return all it answered
    before closing the connection."""
    with socket.create_connection((service.host, service.port), timeout=20) as conn:
        conn.sendall(head)
        try:
            for at in range(0, len(body), 1 << 16):
                conn.sendall(body[at : at + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the service closed the connection: the refusal under test
        answer = b""
        try:
            while chunk := conn.recv(65536):  # the service must close: no timeout here
                answer += chunk
        except ConnectionResetError:
            pass
        return answer


def declared(path: bytes, method: bytes = b"POST") -> bytes:
    return (
        method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % GIB
    )


def chunked(path: bytes, method: bytes = b"POST") -> bytes:
    return (
        method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    )


def chunks(total: int) -> bytes:
    piece = b"x" * 4096
    return (b"1000\r\n" + piece + b"\r\n") * (total // 4096)


@pytest.mark.parametrize("method", [b"POST", b"GET", b"PUT"])
def test_serve_refuses_a_1gb_declared_body(serve: Service, method: bytes) -> None:
    answer = send(serve, declared(b"/checkpoint", method), b"x" * (8 << 20))
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert serve.temp_bytes() == 0


def test_serve_refuses_any_body_even_small_or_chunked(serve: Service) -> None:
    small = b"POST /checkpoint HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\n"
    assert send(serve, small, b"x").startswith(b"HTTP/1.1 413 ")
    assert send(serve, chunked(b"/checkpoint"), chunks(8 << 20)).startswith(b"HTTP/1.1 413 ")
    assert serve.temp_bytes() == 0


def test_serve_still_serves_without_a_body(serve: Service) -> None:
    head = b"GET /checkpoint HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    answer = send(serve, head, b"")
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"x\n")


def test_witness_refuses_a_1gb_declared_body(witness: Service) -> None:
    answer = send(witness, declared(b"/add-checkpoint"), b"x" * (8 << 20))
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"at most 65536 bytes" in answer
    assert witness.temp_bytes() == 0


def test_witness_refuses_a_chunked_body_once_it_passes_the_limit(witness: Service) -> None:
    answer = send(witness, chunked(b"/add-checkpoint"), chunks(64 << 20))
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert witness.temp_bytes() == 0


def test_witness_still_reads_a_body_within_the_limit(witness: Service) -> None:
    body = b"old 0\n\nnot a checkpoint\n"
    head = (
        b"POST /add-checkpoint HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    answer = send(witness, head, body)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]  # read, parsed and refused
