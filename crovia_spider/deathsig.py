"""A child process that dies with its parent, by the kernel's hand (issue 47).

A process killed with SIGKILL cannot stop its children, and a child busy in one long C call (an
lxml XPath evaluation) runs no Python code that could notice its parent is gone. Linux's
PR_SET_PDEATHSIG has the kernel send the child a signal when the thread that started it ends, so
`crovia crawl`'s `scrapy crawl`, a crawl's parser worker and the crawls of the cluster's worker
and sequencer die with their parent, however it ends. Set in the child (after fork, or first
thing in a spawned process), then the parent is checked once more: a parent that died before the
call sent nothing. Elsewhere than Linux this is a no-op, and the parser worker's own watch thread
(crovia_spider/feed/ceilings.py) remains.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1  # <sys/prctl.h>


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()  # looked up before any fork: a forked child only calls it


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """Have the kernel send `signum` to this process when its parent (pid `parent`) ends; exit at
    once if it has already ended. Async-signal-safe enough for a `preexec_fn` (one system call,
    no allocation of note)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def preexec(signum: int = signal.SIGKILL) -> Callable[[], None]:
    """A `preexec_fn` for subprocess.Popen: the child gets `signum` when the calling process's
    current thread ends (start children from a thread that lives as long as they should)."""
    parent = os.getpid()

    def setup() -> None:
        die_with_parent(parent, signum)

    return setup
