"""A feed server for tests: threaded HTTP on 127.0.0.1 (random port), files plus scripted replies.

Files under the server's roots are served with a strong ETag (sha256 of the bytes) and a fixed
Last-Modified, and answer conditional requests with 304. `script(path, Reply(...), ...)` makes a
path answer with the given replies in order (the last one repeats): any status, headers, body, a
delay before answering, a redirect; a reply may also be a callable of the request's target (path
and query) returning the Reply, for an endpoint that answers by the query. Every request is
recorded (`requests`, `requests_for(path)`) with its headers, so a test can check what the crawler
sent; so is every body the server sent (`sent_bodies(path)`), so a test can check what the crawler
signed against it. Nothing here sleeps to synchronise: a delay is the behaviour under test (a slow
server).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import mimetypes
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

LAST_MODIFIED = "Mon, 27 Apr 2026 04:00:00 GMT"
_TYPES = {
    ".xml": "application/rss+xml",
    ".rdf": "application/rdf+xml",
    ".atom": "application/atom+xml",
    ".jsonl": "application/x-ndjson",
}


@dataclass
class Reply:
    """One scripted answer. `body` may be bytes or a callable returning bytes (built lazily)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the answer starts (a slow server)


@dataclass(frozen=True)
class SeenRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    at: float = 0.0  # time.monotonic() when the request arrived


class FeedServer:
    """Start with `with FeedServer(root) as server:`; `server.url("/a.xml")` is the address."""

    def __init__(self, *roots: Path, host: str = "127.0.0.1", tls: Any = None) -> None:
        """Serve `roots` on `host` (any loopback address, 127.0.0.0/8), at a random port; over
        TLS with `tls` (a server-side ssl.SSLContext), and then `base` is https."""
        self.roots = [Path(r) for r in roots]
        self.scripts: dict[str, list[Reply | Callable[[str], Reply]]] = {}
        self.requests: list[SeenRequest] = []
        self.sent: list[tuple[str, bytes]] = []  # (path, body) of every answer, in order
        self._lock = threading.Condition()
        self._httpd = _Server((host, 0), _handler_for(self))
        self.scheme = "http"
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
            self.scheme = "https"
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FeedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{self.scheme}://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base + "/" + path.lstrip("/")

    def script(self, path: str, *replies: Reply | Callable[[str], Reply]) -> str:
        """Make `path` answer with `replies` in order (the last repeats), each a Reply or a
        callable of the request's target (path and query) returning one; return its URL."""
        with self._lock:
            self.scripts["/" + path.lstrip("/")] = list(replies)
        return self.url(path)

    def requests_for(self, path: str) -> list[SeenRequest]:
        path = "/" + path.lstrip("/")
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def sent_bodies(self, path: str) -> list[bytes]:
        """Every body sent for `path`, in order (exactly the bytes written after the headers)."""
        path = "/" + path.lstrip("/")
        with self._lock:
            return [body for sent_path, body in self.sent if sent_path == path]

    def wait_for_request(self, path: str, timeout: float) -> bool:
        """Block until `path` has been requested (True) or `timeout` seconds passed (False)."""
        path = "/" + path.lstrip("/")
        with self._lock:
            return self._lock.wait_for(
                lambda: any(r.path == path for r in self.requests), timeout=timeout
            )

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.sent.clear()

    def _record(self, path: str, headers: dict[str, str]) -> Reply | Callable[[str], Reply] | None:
        with self._lock:
            self.requests.append(SeenRequest(path, headers, time.monotonic()))
            self._lock.notify_all()
            replies = self.scripts.get(path)
            if not replies:
                return None
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def _file(self, path: str) -> Path | None:
        relative = path.lstrip("/")
        for root in self.roots:
            candidate = (root / relative).resolve()
            if candidate.is_file() and candidate.is_relative_to(root.resolve()):
                return candidate
        return None


class _Server(http.server.ThreadingHTTPServer):
    # The default backlog of 5 drops SYNs when a crawl opens many connections at once, and the
    # client's 1 s SYN retransmit then looks like a timeout.
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up (timeout, size limit) is the behaviour under test, not an error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def file_reply(path: Path, request_headers: dict[str, str]) -> Reply:
    """A file with validators; 304 when the request's validators match."""
    data = path.read_bytes()
    etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Last-Modified": LAST_MODIFIED}
    if request_headers.get("if-none-match") == etag or (
        "if-none-match" not in request_headers
        and request_headers.get("if-modified-since") == LAST_MODIFIED
    ):
        return Reply(304, b"", headers)
    kind = _TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/xml"
    return Reply(200, data, {**headers, "Content-Type": kind})


def _handler_for(server: FeedServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = server._record(path, headers)
            if callable(reply):
                reply = reply(self.path)
            if reply is None:
                found = server._file(path)
                reply = file_reply(found, headers) if found else Reply(404, b"not found")
            self._send(path, reply)

        def _send(self, path: str, reply: Reply) -> None:
            if reply.delay:
                time.sleep(reply.delay)  # the slow server under test, not synchronisation
            body = reply.body() if callable(reply.body) else reply.body
            with server._lock:
                server.sent.append((path, body))
            # The client may give up (size limit, timeout): that is what such a test checks.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in reply.headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # requests are recorded in server.requests instead

    return Handler
