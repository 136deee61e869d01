"""One delivery attempt: a webhook POST through the fetch policy, or one Apprise notification.

A webhook target is held to the fetch policy's rules (crovia_spider/fetching/fetchpolicy.py): an
http(s) URL whose host resolves only to global addresses, unless config/notify.toml allows that
host (`allow_private`); the request goes to the address that was checked (no second lookup a DNS
answer could change). Each attempt is bounded in time as a whole (connecting, sending, reading the
answer's head and at most ANSWER_BYTES of its body): a receiver that answers byte by byte is cut
off at the deadline. No redirect is followed: Standard Webhooks calls a 3xx a failure (update the
URL instead). What came back is an `Attempt`; the outbox decides what it means.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from crovia_spider.fetching.fetchpolicy import resolved_refusal, scheme_refusal

ANSWER_BYTES = 65536
USER_AGENT = "crovia-spider-notify (Standard Webhooks)"


@dataclass
class Attempt:
    status: int | None = None  # the receiver's HTTP status, None when none came
    error: str = ""  # why it failed ("" when it did not)
    retry_after: float | None = None  # seconds the receiver asked to wait (Retry-After)
    refused: bool = False  # refused before sending (the fetch policy)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and not self.error


def target_refusal(url: str, allows: Any) -> tuple[str | None, list[str]]:
    """(why `url` may not be a target, or None; the addresses its host resolved to). `allows`
    (host, port) -> bool lets a non-global host through (config/notify.toml allow_private)."""
    if (why := scheme_refusal(url, None)) is not None:
        return why, []
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"DNS lookup of {host} failed: {exc}", []
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if allows(host, port):
        return None, addresses
    why = resolved_refusal(host, addresses)
    if why is not None:
        why += " (a webhook goes to global addresses only; allow_private in config/notify.toml)"
    return why, addresses


def post(url: str, body: bytes, headers: dict[str, str], timeout: float, allows: Any) -> Attempt:
    """POST `body` to `url` with `headers`, within `timeout` seconds in all (module docstring)."""
    deadline = time.monotonic() + timeout
    why, addresses = target_refusal(url, allows)
    if why is not None:
        return Attempt(error=f"refused: {why}", refused=True)
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sock: socket.socket | None = None
    watchdog: threading.Timer | None = None
    try:
        sock = socket.create_connection((addresses[0], port), timeout=_left(deadline))
        if parts.scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        watchdog = threading.Timer(_left(deadline), _cut, (sock,))
        watchdog.daemon = True
        watchdog.start()
        connection = http.client.HTTPConnection(host, port, timeout=_left(deadline))
        connection.sock = sock  # the checked address, never a second lookup
        sent = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
        connection.request("POST", path, body=body, headers=sent)
        answer = connection.getresponse()
        answer.read(ANSWER_BYTES)
        attempt = Attempt(status=answer.status, retry_after=_retry_after(answer))
        if 300 <= answer.status < 400:
            where = answer.getheader("Location", "")[:300]
            attempt.error = (
                f"HTTP {answer.status} redirect to {where!r}: not followed (update the URL)"
            )
        elif not 200 <= answer.status < 300:
            attempt.error = f"HTTP {answer.status}"
        if time.monotonic() > deadline:
            attempt = Attempt(error=f"no complete answer within {timeout:g}s")
        return attempt
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if time.monotonic() >= deadline:
            return Attempt(error=f"no complete answer within {timeout:g}s")
        return Attempt(error=f"{type(exc).__name__}: {exc}"[:300])
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if sock is not None:
            sock.close()


def _left(deadline: float) -> float:
    return max(0.001, deadline - time.monotonic())


def _cut(sock: socket.socket) -> None:
    """The deadline passed: end the connection, whatever it is waiting for."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _retry_after(answer: http.client.HTTPResponse) -> float | None:
    value = (answer.getheader("Retry-After") or "").strip()
    if value.isdigit():
        return min(float(value), 86400.0)
    return None


def apprise_send(url: str, title: str, text: str, timeout: float, allows: Any) -> Attempt:
    """One Apprise notification of `title` and `text` to `url`, within `timeout` seconds (it
    runs in a thread given up on at the deadline: Apprise bounds its own requests too). A URL
    whose host is a literal non-global address, or `localhost`, is refused unless allowed; a
    name is not resolved here (Apprise connects itself)."""
    import apprise

    refusal = _apprise_refusal(url, allows)
    if refusal:
        return Attempt(error=f"refused: {refusal}", refused=True)
    notifier = apprise.Apprise()
    if not notifier.add(url):
        return Attempt(error="not an Apprise URL Apprise reads", refused=True)
    outcome: list[bool] = []
    worker = threading.Thread(
        target=lambda: outcome.append(bool(notifier.notify(title=title, body=text))), daemon=True
    )
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return Attempt(error=f"Apprise did not finish within {timeout:g}s")
    if not outcome or not outcome[0]:
        return Attempt(error="Apprise could not deliver it (its log says why)")
    return Attempt(status=200)


def _apprise_refusal(url: str, allows: Any) -> str:
    from crovia_spider.fetching.fetchpolicy import address_refusal, is_ip_literal

    try:
        parts = urlsplit(url)
        host, port = (parts.hostname or "").rstrip("."), parts.port or 0
    except ValueError as exc:
        return f"not a URL: {exc}"
    if not host or allows(host, port):
        return ""
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is a local name"
    if is_ip_literal(host) and (kind := address_refusal(host)) is not None:
        return f"{host} is a {kind} address (allow_private in config/notify.toml)"
    return ""
