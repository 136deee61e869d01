"""A trap for DNS and connections, for the processes a test starts (never imported by the product).

A test puts this directory first on a child's PYTHONPATH and sets CROVIA_NET_TRAP_LOG to a file:
Python then imports this module at start-up (`sitecustomize`), in that process and in every Python
process it starts (they inherit the environment: `crovia capture`'s `scrapy crawl`, the parser
worker), and an audit hook (PEP 578) sees each name lookup and each connection or datagram before
it is made. Allowed: loopback addresses (127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6),
names listed in CROVIA_NET_TRAP_NAMES (comma-separated; none by default), and sockets that are
not IP (a Unix socket, a pipe). Anything else is refused (the call raises OSError, so nothing
leaves the machine) and written to the log as one JSON line: the event, what it asked for, the
process, and the files of the Python frames that asked (which library did it). Allowed
connections are logged too (`"verdict": "ok"`), so a test can see the trap was live.

Only the audit events CPython raises are seen: a C extension that opens its own sockets
without them would pass unseen (none in this project does).
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import sys
import traceback

LOG = os.environ.get("CROVIA_NET_TRAP_LOG", "")
NAMES = {name for name in os.environ.get("CROVIA_NET_TRAP_NAMES", "").split(",") if name}
LOOKUPS = (
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
)
SENDS = ("socket.connect", "socket.sendto", "socket.sendmsg")


def is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def _write(verdict: str, event: str, target: str) -> None:
    frames = [
        frame.filename
        for frame in traceback.extract_stack()[:-3]
        if "nettrap" not in frame.filename
    ]
    line = {"verdict": verdict, "event": event, "target": target, "pid": os.getpid()}
    if verdict != "ok":
        line["frames"] = list(dict.fromkeys(frames))[-12:]
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _hook(event: str, args: tuple) -> None:
    if not event.startswith("socket."):
        return
    if event in LOOKUPS:
        host = args[0][0] if event == "socket.getnameinfo" else args[0]
        if host is None or is_loopback(host) or str(host) in NAMES:
            return
        _write("refused", event, repr(host))
        raise socket.gaierror(socket.EAI_NONAME, f"refused by the test's network trap: {host!r}")
    if event in SENDS:
        sock, address = args[0], args[1]
        if address is None or getattr(sock, "family", None) not in (
            socket.AF_INET,
            socket.AF_INET6,
        ):
            return
        host = address[0] if isinstance(address, tuple) and address else address
        if is_loopback(host):
            if event == "socket.connect":
                _write("ok", event, f"{host}:{address[1]}")
            return
        _write("refused", event, repr(address))
        raise ConnectionRefusedError(f"refused by the test's network trap: {address!r}")


if LOG:
    sys.addaudithook(_hook)
