"""One deadline for one HTTP exchange, however the server answers: the watchdog of our clients.

A socket timeout bounds each read, not the exchange: a server that drips one byte a second keeps
every read short and the exchange endless. So a timer shuts the socket down when the deadline
passes, and every blocked or later read on it ends at once. The socket must be the watchdog's own
reference: http.client hands it to a response that will close it (HTTP/1.0, `Connection: close`)
and sets `connection.sock` to None, and TLS wraps it in a new object. The watchdog therefore
creates the connection's socket itself and keeps a duplicate of it (shutdown acts on the socket,
not on one descriptor of it), so headers, body, chunk lines, a proxy's CONNECT answer and the TLS
handshake are all cut at the deadline. Used by the monitor's HttpSource, `crovia stamp`'s
transport and the witness client.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading


class Watchdog:
    """Shuts down the socket of `connection` `seconds` from now. `with Watchdog(...)` cancels it
    and releases the socket on exit; `fired` says whether the deadline passed (a read cut short
    then is the deadline's doing, whatever error it raised)."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self.fired = False
        self._held: socket.socket | None = None
        self._lock = threading.Lock()
        # http.client opens every socket of a connection through this attribute (it exists so
        # that it can be replaced); ours keeps a reference the connection cannot detach
        connection._create_connection = self._create_connection  # type: ignore[attr-defined]
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def __enter__(self) -> Watchdog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()

    def _create_connection(self, *args, **kwargs) -> socket.socket:
        sock = socket.create_connection(*args, **kwargs)
        with self._lock:
            if self._held is not None:
                self._held.close()
            self._held = sock.dup()
            if self.fired:
                _shut(self._held)
        return sock

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            if self._held is not None:
                _shut(self._held)

    def cancel(self) -> None:
        """Stop the timer and release the watchdog's reference to the socket."""
        self._timer.cancel()
        with self._lock:
            if self._held is not None:
                self._held.close()
                self._held = None


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the peer
        sock.shutdown(socket.SHUT_RDWR)
