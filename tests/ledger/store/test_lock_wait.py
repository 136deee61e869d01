"""A writer that has to wait for the ledger lock says so once, naming the holder's pid, at once.

Before, a second writer printed nothing for up to CROVIA_LOCK_TIMEOUT (60 s) and only then gave up.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

from ledger.keys import load_signing_key
from ledger.store import Ledger
from tests.crawl import crawl_env, run_crawl
from tests.vectors.make_vectors import sample_envelope

WAITING = "waiting for the ledger lock"


class _Announced(logging.Handler):
    """Collects ledger.lock's messages and signals the first one."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []
        self.first = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        self.first.set()


def test_a_waiting_writer_says_so_once_with_the_holders_pid(ledger_dir: Path, key) -> None:
    handler = _Announced()
    logger = logging.getLogger("ledger.lock")
    logger.addHandler(handler)
    first = Ledger.open(ledger_dir, signing_key=key)
    thread = threading.Thread(
        target=lambda: Ledger.open(ledger_dir, signing_key=key, lock_timeout=60).close()
    )
    try:
        thread.start()
        # The message comes as soon as the wait starts: the holder is still holding the lock.
        assert handler.first.wait(timeout=30)
        first.close()
        thread.join()
    finally:
        logger.removeHandler(handler)
    assert len(handler.messages) == 1
    message = handler.messages[0]
    assert WAITING in message and f"pid {os.getpid()}" in message
    assert str(ledger_dir / "ledger.lock") in message and "up to 60s" in message


def test_no_message_when_the_lock_is_free(ledger_dir: Path, key, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="ledger.lock"):
        Ledger.open(ledger_dir, signing_key=key).close()
    assert caplog.records == []


def test_crovia_seal_says_it_waits_then_gives_up(ledger_dir: Path, key, tmp_path: Path) -> None:
    key_file = tmp_path / "signing.key"
    key_file.touch(mode=0o600)
    key_file.write_text(key.encode().hex() + "\n")
    crovia = Path(sys.executable).parent / "crovia"
    argv = [str(crovia), "seal", "--ledger-dir", str(ledger_dir), "--key", str(key_file)]
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(0)])
        proc = subprocess.run(
            [*argv, "--lock-timeout", "0.2"], capture_output=True, text=True, timeout=60
        )
    assert proc.returncode == 2
    assert proc.stderr.count(WAITING) == 1
    assert f"pid {os.getpid()}" in proc.stderr.split(WAITING, 1)[1].splitlines()[0]
    assert "gave up after" in proc.stderr


def test_a_crawl_says_it_waits(tmp_path: Path, feed_server) -> None:
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    key = load_signing_key(crawl_env(tmp_path)["CROVIA_SIGNING_KEY_FILE"])
    with Ledger.open(tmp_path / "ledger", signing_key=key):
        proc = run_crawl(tmp_path, feeds, "-s", "CROVIA_LOCK_TIMEOUT=0.3")
    assert proc.returncode != 0
    assert proc.stderr.count(WAITING) == 1
    assert f"pid {os.getpid()}), up to 0.3s" in proc.stderr
    assert feed_server.requests == []
