"""Where a monitor reads a published log from: a directory, or an http(s) URL of one.

A source only fetches bytes; everything it returns is checked by the caller
(ledger/monitor/follow.py), which is why the fetcher is this small and can be swapped for another
(tests, mirrors). The HTTP source is a careful client of a server it does not trust:

- every read has a size limit, checked on the declared length, on the bytes sent and on what a
  gzip answer decompresses to (a bomb stops at the limit, never in memory);
- redirects are followed only within the log's origin (scheme, host, port), at most 5 in a row;
- no proxy unless one is given (`proxy=`; the environment's *_PROXY variables are ignored);
- one deadline for the whole run: the time spent waiting on the log, summed over every request,
  is at most `timeout` seconds; a watchdog (ledger/monitor/watchdog.py) shuts the socket down
  when it runs out, so a server that drips one byte at a time cannot hold the monitor longer,
  whether it answers HTTP/1.0, keep-alive, `Connection: close` or chunked.

A log that misbehaves is a failed check (LogMisbehaved, exit 1, naming the file); only a log that
cannot be reached at all (no connection, or closed before any answer) is SourceUnavailable
(exit 2), and so is a 5xx answer (a server that says it is down). docs/ledger.md, "Monitoring".
"""

from __future__ import annotations

import http.client
import io
import threading
import time
import zlib
from pathlib import Path, PurePosixPath
from typing import Protocol
from urllib.parse import urljoin, urlsplit

from ledger.exceptions import LogMisbehaved, NotPublished, SourceUnavailable
from ledger.monitor.watchdog import Watchdog

USER_AGENT = "crovia-monitor (+https://c2sp.org/tlog-tiles)"
DEFAULT_TIMEOUT = 300.0  # seconds a run may spend waiting on the log, all requests together
MAX_REDIRECTS = 5
_CHUNK = 1 << 16
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}


class LogSource(Protocol):
    """Fetches the objects of a published log by their relative path (`checkpoint`, `tile/...`)."""

    name: str

    def get(self, path: str, limit: int) -> bytes:
        """The object's bytes. Raises NotPublished when it does not exist, LogMisbehaved when the
        log answers as it must not (longer than `limit` bytes, ...), SourceUnavailable when it
        cannot be reached or read."""
        ...


def open_source(spec: str, timeout: float = DEFAULT_TIMEOUT, proxy: str | None = None) -> LogSource:
    """An HttpSource for an http(s) URL, else a DirectorySource for a path."""
    if spec.startswith(("http://", "https://")):
        return HttpSource(spec, timeout, proxy=proxy)
    return DirectorySource(Path(spec))


class DirectorySource:
    """A published directory on this machine."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.name = str(root)

    def get(self, path: str, limit: int) -> bytes:
        target = self.root.joinpath(*_parts(path))
        try:
            with open(target, "rb") as src:
                data = _read_at_most(src, limit)
        except FileNotFoundError:
            raise NotPublished(f"{self.name}: no {path}") from None
        except OSError as exc:
            raise SourceUnavailable(f"{self.name}: cannot read {path}: {exc}") from None
        return _within(data, limit, path)


class HttpSource:
    """A published directory behind a static web server (plain or gzip-encoded answers)."""

    def __init__(
        self, base_url: str, timeout: float = DEFAULT_TIMEOUT, *, proxy: str | None = None
    ) -> None:
        self.base = base_url.rstrip("/") + "/"
        self.name = self.base
        self._origin = _origin(self.base)
        self._timeout = timeout
        self._spent = 0.0
        self._lock = threading.Lock()
        self._proxy = urlsplit(proxy) if proxy else None
        if self._proxy is not None and (self._proxy.scheme != "http" or not self._proxy.hostname):
            raise ValueError(f"a proxy is an http://host:port URL, not {proxy!r}")

    def get(self, path: str, limit: int) -> bytes:
        url = self.base + "/".join(_parts(path))
        with self._lock:  # one request at a time: the deadline is a sum of waits
            for _ in range(MAX_REDIRECTS + 1):
                started = time.monotonic()
                try:
                    answer = self._fetch(url, path, limit)
                finally:
                    self._spent += time.monotonic() - started
                if isinstance(answer, bytes):
                    return answer
                url = self._redirect(path, url, answer)
        raise LogMisbehaved(f"{path}: more than {MAX_REDIRECTS} redirects")

    def _redirect(self, path: str, url: str, location: str) -> str:
        target = urljoin(url, location)
        if _origin(target) != self._origin:
            raise LogMisbehaved(
                f"{path}: redirected off the log's origin",
                expected=self._origin_text(),
                computed=target,
            )
        return target

    def _origin_text(self) -> str:
        scheme, host, port = self._origin
        return f"{scheme}://{host}:{port}"

    def _fetch(self, url: str, path: str, limit: int) -> bytes | str:
        """The body of a 200 (decoded), or the Location of a redirect."""
        remaining = self._timeout - self._spent
        if remaining <= 0:
            raise self._late(path)
        # the socket's own timeout is a backstop: the watchdog fires first
        connection, target = self._connection(url, remaining + 1)
        watchdog = Watchdog(connection, remaining)
        try:
            try:
                connection.connect()
            except OSError as exc:
                if watchdog.fired:  # a dripped TLS handshake or proxy answer
                    raise self._late(path) from None
                raise SourceUnavailable(f"{url}: unreachable: {exc}") from None
            connection.request(
                "GET",
                target,
                headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, identity"},
            )
            response = connection.getresponse()
            answer = self._answer(response, url, path, limit)
            if watchdog.fired:  # the body may have been cut short by the watchdog
                raise self._late(path)
            return answer
        except (OSError, http.client.HTTPException) as exc:
            if watchdog.fired or isinstance(exc, TimeoutError):
                raise self._late(path) from None
            if isinstance(exc, http.client.RemoteDisconnected):
                raise SourceUnavailable(f"{url}: closed before any answer") from None
            raise LogMisbehaved(f"{path}: a broken HTTP answer ({exc!r})") from None
        finally:
            watchdog.cancel()
            connection.close()

    def _late(self, path: str) -> LogMisbehaved:
        return LogMisbehaved(
            f"{path}: the log did not answer within the monitor's deadline"
            f" ({self._timeout:g} s for the whole run)"
        )

    def _connection(self, url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
        parts = urlsplit(url)
        target = parts.path or "/"
        https = parts.scheme == "https"
        kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
        if self._proxy is None:
            return kind(parts.hostname, parts.port, timeout=timeout), target
        proxied = http.client.HTTPConnection(
            self._proxy.hostname, self._proxy.port or 80, timeout=timeout
        )
        if parts.scheme == "http":  # a plain proxy takes the absolute URL
            return proxied, url
        tunnel = http.client.HTTPSConnection(
            self._proxy.hostname, self._proxy.port or 80, timeout=timeout
        )
        tunnel.set_tunnel(parts.hostname, parts.port or 443)
        return tunnel, target

    def _answer(
        self, response: http.client.HTTPResponse, url: str, path: str, limit: int
    ) -> bytes | str:
        status = response.status
        if status in _REDIRECTS:
            location = response.getheader("Location")
            if not location:
                raise LogMisbehaved(f"{path}: HTTP {status} without a Location")
            return location
        if status == 404:
            raise NotPublished(f"{url}: 404 Not Found")
        if status >= 500:
            raise SourceUnavailable(f"{url}: HTTP {status}")
        if status != 200:
            raise LogMisbehaved(f"{path}: HTTP {status}")
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding not in ("identity", "", "gzip"):
            raise LogMisbehaved(f"{path}: unsupported Content-Encoding {encoding!r}")
        gzipped = encoding == "gzip"
        # gzip of incompressible bytes (hashes) is a little longer than they are
        sent_limit = limit + limit // 64 + 1024 if gzipped else limit
        declared = response.getheader("Content-Length")
        if declared is not None and declared.strip().isdigit() and int(declared) > sent_limit:
            raise LogMisbehaved(
                f"{path}: the answer declares {int(declared)} bytes, more than {sent_limit}"
            )
        data = _within(_read_body(response, sent_limit), sent_limit, path)
        return _gunzip(data, limit, path) if gzipped else data


def _read_body(response: http.client.HTTPResponse, limit: int) -> bytes:
    """At most `limit + 1` bytes of the body; fewer than its declared length is an error."""
    data = _read_at_most(response, limit)
    if len(data) <= limit and response.length:  # fewer bytes than the declared length
        raise http.client.IncompleteRead(data, response.length)
    return data


def _read_at_most(stream: io.BufferedIOBase, limit: int) -> bytes:
    """At most `limit + 1` bytes of `stream`, read in chunks: what is held is what was sent, not
    the limit (one read of `limit + 1` would allocate the whole limit, 16 MiB for a bundle)."""
    parts, size = [], 0
    while size <= limit:
        chunk = stream.read1(min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def _gunzip(data: bytes, limit: int, path: str) -> bytes:
    """The gzip member in `data`, decompressed to at most `limit` bytes (a bomb stops there)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise LogMisbehaved(f"{path}: a broken gzip answer ({exc})") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise LogMisbehaved(f"{path}: the gzip answer decompresses to more than {limit} bytes")
    if not inflater.eof:
        raise LogMisbehaved(f"{path}: a truncated gzip answer")
    return out


def _within(data: bytes, limit: int, path: str) -> bytes:
    if len(data) > limit:
        raise LogMisbehaved(f"{path}: longer than {limit} bytes")
    return data


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port


def _parts(path: str) -> tuple[str, ...]:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise ValueError(f"not a path inside a published log: {path!r}")
    return pure.parts
