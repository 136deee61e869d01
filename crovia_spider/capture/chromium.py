"""The system Chromium, driven by Playwright, that no crawl outlives (docs/spider.md, "Browser
captures").

Playwright starts its driver (Node) as a child of the crawl and the driver starts Chromium in a
process group of its own. The driver exits when the crawl's end of its pipe closes, however the
crawl ends, and closes its browsers then; but a driver killed outright would leave Chromium
behind. So Chromium is not started directly: `executable_path` is a launcher written for the
session (`launcher`) that has the kernel kill Chromium when the thread that started it (the
driver's) ends (PR_SET_PDEATHSIG, as crovia_spider/deathsig.py does for the crawl's own
children), then execs the real binary. Chromium's own helpers (zygote, renderers) end when their
browser process does. The browser process (and its crash handlers) carry
`CROVIA_BROWSER_SESSION=<token>` in their environment, so a test (or an operator) can tell this
crawl's Chromium from any other; the zygotes and renderers do not show it (Chromium writes their
process titles over the memory /proc/PID/environ reads), so a session's processes are the
marked ones and every descendant of them (`session_processes`): a renderer's memory is the
session's, and a process left after its browser closed is killed by the identity it had
(`session_identities`, `kill_left`).

Nothing is downloaded: the binary is CROVIA_CHROMIUM (default /usr/bin/chromium). Its network is a
dead end: every request a page makes is fulfilled by the crawl through Scrapy
(crovia_spider/capture/browser.py); the proxy Chromium is given is a loopback port bound and never
listened on, so a connection it would make by itself (a preconnect, a WebSocket, a redirect it
followed) is refused on the spot, and no name is resolved by Chromium (a proxy resolves names).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_CHROMIUM = "/usr/bin/chromium"
SESSION_ENV = "CROVIA_BROWSER_SESSION"
# Flags for a headless Chromium that sends nothing of its own (no updates, no sync, no metrics)
# and whose JavaScript heap is capped (--js-flags is added per session).
CHROMIUM_ARGS = (
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--disable-features=Prefetch,NetworkPrediction,SpeculationRules,PreloadingHeuristics,"
    "AutofillServerCommunication,OptimizationHints,MediaRouter,InterestFeedContentSuggestions",
    "--dns-prefetch-disable",
    "--mute-audio",
    "--hide-scrollbars",
)
_LAUNCHER = """#!{python} -I
# Written by crovia_spider/capture/chromium.py for one browser session: Chromium dies with the
# thread that started it (the Playwright driver's), then the real binary runs in this process.
import ctypes, os, signal, sys
parent = os.getppid()
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
if os.getppid() != parent:
    os._exit(1)
os.execv({binary!r}, [{binary!r}, *sys.argv[1:]])
"""


class ChromiumMissing(RuntimeError):
    """CROVIA_CHROMIUM names no executable file."""


def chromium_path(setting: str | None) -> Path:
    """The Chromium binary of CROVIA_CHROMIUM (a path, or a command found on PATH)."""
    name = setting or DEFAULT_CHROMIUM
    found = shutil.which(name)
    if found is None:
        raise ChromiumMissing(
            f"CROVIA_CHROMIUM: no Chromium at {name!r} (install the system's: apt-get install"
            " chromium); browser captures never download a browser"
        )
    return Path(found)


@dataclass
class Launcher:
    """The files and the socket of one session: a private directory holding the launcher, and
    the dead proxy's bound socket (closed with the session)."""

    directory: Path
    executable: Path
    proxy: socket.socket
    token: str

    @property
    def proxy_server(self) -> str:
        host, port = self.proxy.getsockname()[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.proxy.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def launcher(binary: Path) -> Launcher:
    """A launcher of `binary` in a new private directory (0700), and a dead proxy port."""
    directory = Path(tempfile.mkdtemp(prefix="crovia-browser-"))
    executable = directory / "chromium"
    executable.write_text(_LAUNCHER.format(python=sys.executable, binary=str(binary)))
    executable.chmod(stat.S_IRWXU)
    dead = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    dead.bind(("127.0.0.1", 0))  # bound, never listening: a connection to it is refused
    return Launcher(directory, executable, dead, secrets.token_hex(8))


def launch_options(session: Launcher, memory_mb: int, user_agent: str) -> dict[str, Any]:
    """The keyword arguments of Playwright's `chromium.launch` for `session`."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TZ", "TMPDIR")}
    env[SESSION_ENV] = session.token
    heap = max(64, memory_mb // 2)
    return {
        "executable_path": str(session.executable),
        "args": [*CHROMIUM_ARGS, f"--js-flags=--max-old-space-size={heap}"],
        # Every connection Chromium would make itself goes to the dead port, loopback included
        # (Chromium bypasses a proxy for loopback unless told "<-loopback>").
        "proxy": {"server": session.proxy_server, "bypass": "<-loopback>"},
        "env": env,
        # The crawl closes the browser itself: a Ctrl-C stops the crawl gracefully first.
        "handle_sigint": False,
        "handle_sigterm": False,
        "handle_sighup": False,
        # Chromium's own sandbox around the renderers of hostile pages, wherever it can run:
        # not as root (Chromium refuses it there; a crawl should not run as root).
        "chromium_sandbox": os.geteuid() != 0,
    }


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), None once gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].decode("ascii", "replace").split()
    except (OSError, IndexError):
        return None


def session_identities(token: str) -> set[tuple[int, str]]:
    """The live processes of the session `token` (this user's only), each (pid, start time): a
    pid may be reused once its process has gone, the pair names one process for good. They are
    those whose environment carries the token (the browser, its crash handlers) and every
    descendant of them (zygotes, renderers, utilities, whose environment Chromium overwrites with
    their titles)."""
    marked = []
    children: dict[int, list[int]] = {}
    started: dict[int, str] = {}
    needle = f"{SESSION_ENV}={token}".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        fields = _proc_stat(pid)
        if fields is None or fields[0] == "Z":  # gone, or a zombie: holds nothing, runs nothing
            continue
        children.setdefault(int(fields[1]), []).append(pid)
        started[pid] = fields[19]
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            marked.append(pid)
    found, todo = set(marked), list(marked)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return {(pid, started[pid]) for pid in found}


def session_processes(token: str) -> list[int]:
    """The pids of the session's live processes (`session_identities`)."""
    return sorted(pid for pid, _ in session_identities(token))


def kill_left(identities: set[tuple[int, str]]) -> None:
    """SIGKILL each process of `identities` still alive as itself (its pid not reused)."""
    for pid, started in identities:
        fields = _proc_stat(pid)
        if fields is not None and fields[0] != "Z" and fields[19] == started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def resident_bytes(pids: list[int]) -> int:
    """The memory `pids` hold together: each one's proportional set size (its private pages and
    its share of the pages it shares, /proc/PID/smaps_rollup), so Chromium's processes, which
    share most of their pages, are not counted several times over; a process gone counts 0."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
                for line in handle:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError, IndexError):
            continue
    return total
