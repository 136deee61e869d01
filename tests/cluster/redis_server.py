"""A real redis-server for tests: a child process on 127.0.0.1 at a free port, in a directory.

`RedisServer(directory)` starts it and returns once it answers PING; `stop()` shuts it down
cleanly, `kill()` sends SIGKILL (a crash), `restart()` starts it again on the same port and
directory, so an append-only file (`appendonly=True`, fsynced on every write) is replayed. Nothing
is saved otherwise (`--save ""`). The binary is CROVIA_REDIS_SERVER, else Debian's
/usr/bin/redis-server; without it the test fails, saying how to install it (never a skip).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import pytest
import redis

DEFAULT_BINARY = "/usr/bin/redis-server"
MISSING = (
    "redis-server is missing: sudo apt-get install -y redis-server"
    " (or make test, which installs it as root)"
)
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
POLL = 0.02
PORT_ATTEMPTS = 5


def redis_binary() -> str:
    """The redis-server to run; fails the calling test when it is not there."""
    binary = os.environ.get("CROVIA_REDIS_SERVER") or DEFAULT_BINARY
    if not os.access(binary, os.X_OK):
        pytest.fail(f"{MISSING} ({binary} not found)", pytrace=False)
    return binary


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """One redis-server child; `with RedisServer(tmp_path) as server:` stops it on the way out."""

    def __init__(self, directory: Path, appendonly: bool = False) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.appendonly = appendonly
        self.binary = redis_binary()
        self.process: subprocess.Popen[bytes] | None = None
        # Another process may take the free port between our probe and redis-server's bind.
        for _ in range(PORT_ATTEMPTS):
            self.port = _free_port()
            if self._start():
                return
        raise RuntimeError(f"redis-server did not start on a free port: {self._log_tail()}")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log(self) -> Path:
        return self.directory / "redis.log"

    def client(self) -> redis.Redis:
        """A new redis-py client of this server (answers in bytes)."""
        return redis.Redis(host="127.0.0.1", port=self.port, db=0, socket_timeout=10)

    def stop(self) -> None:
        """Shut down cleanly (SIGTERM: redis-server finishes its append-only file and exits)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def kill(self) -> None:
        """SIGKILL: what survives is what redis-server had already written (and fsynced)."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait()
        self.process = None

    def restart(self) -> None:
        """Start again on the same port and directory (replaying the append-only file)."""
        self.stop()
        if not self._start():
            raise RuntimeError(f"redis-server did not restart on {self.port}: {self._log_tail()}")

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _command(self) -> list[str]:
        command = [self.binary, "--bind", "127.0.0.1", "--port", str(self.port)]
        command += ["--dir", str(self.directory), "--save", ""]
        command += ["--appendonly", "yes" if self.appendonly else "no"]
        if self.appendonly:
            command += ["--appendfsync", "always"]
        command += ["--protected-mode", "yes", "--daemonize", "no", "--logfile", str(self.log)]
        return command

    def _start(self) -> bool:
        """Start the child and wait for PING; False when it exited (the port was taken)."""
        quiet = subprocess.DEVNULL  # everything it says goes to redis.log
        self.process = subprocess.Popen(self._command(), stdin=quiet, stdout=quiet, stderr=quiet)
        probe = redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=1, socket_connect_timeout=1
        )
        deadline = time.monotonic() + START_TIMEOUT
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    self.process = None
                    return False
                try:
                    # Another test's redis-server may hold the port: only ours counts.
                    if probe.info("server")["process_id"] == self.process.pid and probe.ping():
                        return True
                except redis.ConnectionError:
                    pass  # not listening yet, or still replaying the append-only file
                time.sleep(POLL)
        finally:
            probe.close()
        self.kill()
        raise RuntimeError(f"redis-server did not answer in {START_TIMEOUT} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return " | ".join(self.log.read_text(errors="replace").splitlines()[-5:])
        except OSError:
            return "no log"
