"""Helpers for scheduler tests: run `crovia schedule` as a real process and follow its log live.

Tests wait on what the scheduler and its children write (a log line appearing, the process exiting),
each with a bounded timeout; nothing sleeps in place of an event.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_CRAWL = Path(__file__).with_name("fake_crawl.py")


class SchedulerProcess:
    """`crovia schedule ARGS` run in the project root, its output and its children's merged."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "crovia_spider", "schedule", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()

    def _pump(self) -> None:
        with self.proc.stdout:
            for line in self.proc.stdout:
                self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 20.0, count: int = 1) -> list[str]:
        """Block until `count` more lines match `pattern`; fail the test after `timeout` seconds."""
        matched: list[str] = []
        while len(matched) < count:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                pytest.fail(f"no line matching {pattern!r} within {timeout}s:\n" + self.log())
            if line is None:
                pytest.fail(f"scheduler exited before {pattern!r}:\n" + self.log())
            self.lines.append(line)
            if re.search(pattern, line):
                matched.append(line)
        return matched

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send `signum`, wait for the exit (bounded), drain the log; returns the exit code."""
        self.proc.send_signal(signum)
        return self.wait_exit(timeout)

    def wait_exit(self, timeout: float = 30.0) -> int:
        """Wait for the process to end (bounded) and drain the log; returns the exit code."""
        code = self.proc.wait(timeout=timeout)
        while (line := self._queue.get(timeout=timeout)) is not None:
            self.lines.append(line)
        return code

    def log(self) -> str:
        return "\n".join(self.lines)

    def kill(self) -> None:
        """Make sure the process is gone and its pipe closed (after a failed test)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._pump_thread.join(timeout=10)


@pytest.fixture
def fake_env(tmp_path: Path) -> dict[str, str]:
    """Environment where crawls are fake_crawl.py and the ledger dir lives in tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CROVIA_", "FAKE_CRAWL_"))}
    env.update(
        CROVIA_SCRAPY_COMMAND=f"{sys.executable} {FAKE_CRAWL}",
        CROVIA_LEDGER_DIR=str(tmp_path / "ledger"),
        FAKE_CRAWL_LOG=str(tmp_path / "fake_crawl.jsonl"),
    )
    return env


@pytest.fixture
def start_scheduler():
    """Factory: start_scheduler(args, env) -> SchedulerProcess; any left running is killed."""
    started: list[SchedulerProcess] = []

    def start(args: list[str], env: dict[str, str]) -> SchedulerProcess:
        started.append(SchedulerProcess(args, env))
        return started[-1]

    yield start
    for process in started:
        process.kill()


def write_schedule(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path
