"""Where a monitor reads a published log from: a directory, or an http(s) URL of one.

A source only fetches bytes; everything it returns is checked by the caller
(ledger/monitor/follow.py), which is why the fetcher is this small and can be swapped for another
(tests, mirrors). Each read has a size limit, so a hostile server cannot exhaust memory.
"""

from __future__ import annotations

import gzip
import io
import urllib.error
import urllib.request
import zlib
from pathlib import Path, PurePosixPath
from typing import Protocol

from ledger.exceptions import NotPublished, SourceUnavailable

USER_AGENT = "crovia-monitor (+https://c2sp.org/tlog-tiles)"


class LogSource(Protocol):
    """Fetches the objects of a published log by their relative path (`checkpoint`, `tile/...`)."""

    name: str

    def get(self, path: str, limit: int) -> bytes:
        """The object's bytes. Raises NotPublished when it does not exist, SourceUnavailable when
        it cannot be read or is longer than `limit` bytes."""
        ...


def open_source(spec: str, timeout: float = 30.0) -> LogSource:
    """An HttpSource for an http(s) URL, else a DirectorySource for a path."""
    if spec.startswith(("http://", "https://")):
        return HttpSource(spec, timeout)
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
                data = src.read(limit + 1)
        except FileNotFoundError:
            raise NotPublished(f"{self.name}: no {path}") from None
        except OSError as exc:
            raise SourceUnavailable(f"{self.name}: cannot read {path}: {exc}") from None
        return _within(data, limit, f"{self.name}/{path}")


class HttpSource:
    """A published directory behind a static web server (plain or gzip-encoded answers)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        self.base = base_url.rstrip("/") + "/"
        self.name = self.base
        self._timeout = timeout

    def get(self, path: str, limit: int) -> bytes:
        url = self.base + "/".join(_parts(path))
        request = urllib.request.Request(
            url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, identity"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as answer:
                data = _within(answer.read(limit + 1), limit, url)
                encoding = answer.headers.get("Content-Encoding", "identity")
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise NotPublished(f"{url}: 404 Not Found") from None
            raise SourceUnavailable(f"{url}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise SourceUnavailable(f"{url}: {exc}") from None
        return _decoded(data, encoding, limit, url)


def _decoded(data: bytes, encoding: str, limit: int, url: str) -> bytes:
    if encoding in ("identity", ""):
        return data
    if encoding != "gzip":
        raise SourceUnavailable(f"{url}: unsupported Content-Encoding {encoding!r}")
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
            return _within(unzipped.read(limit + 1), limit, url)
    except (OSError, EOFError, zlib.error) as exc:
        raise SourceUnavailable(f"{url}: bad gzip body: {exc}") from None


def _within(data: bytes, limit: int, where: str) -> bytes:
    if len(data) > limit:
        raise SourceUnavailable(f"{where}: longer than {limit} bytes")
    return data


def _parts(path: str) -> tuple[str, ...]:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise ValueError(f"not a path inside a published log: {path!r}")
    return pure.parts
