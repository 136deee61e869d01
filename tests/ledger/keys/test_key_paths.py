"""Issue 42, observation 7: a key path that is not a regular file, or that lies in a directory
others can write, is refused with one clear line (exit 2; a crawl's refusal exits 1, as every
refused crawl does), and never by hanging.

Before, `crovia pubkey --key FIFO` blocked in open() for ever (and with it crawl, seal and the
sequencer at start), and a key in a world-writable directory was taken without a word. The rule
is OpenSSH's StrictModes for the files it trusts: a regular file, owned by the user or root, in a
directory its owner alone can write (group- or world-writable refused, sticky or not). Each
command runs as a real process under a timeout, so a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from ledger.exceptions import KeyFileError
from ledger.keys import generate_signing_key, load_signing_key
from ledger.store import Ledger
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, run_crawl
from tests.vectors.make_vectors import sample_envelope

HANG = 60  # seconds: far beyond a refusal, which takes well under one


def crovia(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`crovia ARGS`; a process still running after HANG seconds fails the test."""
    try:
        return subprocess.run(
            [str(BIN / "crovia"), *args],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"crovia {' '.join(args)} hung (still running after {HANG} s)")


@pytest.fixture
def private(tmp_path: Path) -> Path:
    """A directory only its owner can write, holding a key."""
    directory = tmp_path / "private"
    directory.mkdir(mode=0o700)
    generate_signing_key(directory / "signing.key")
    return directory


def _open_dir(tmp_path: Path, mode: int) -> Path:
    directory = tmp_path / f"open-{mode:o}"
    directory.mkdir()
    os.chmod(directory, mode)
    return directory


def _key_in(directory: Path) -> Path:
    """A good key moved into `directory` (made private first, as keygen would refuse there)."""
    mode = stat.S_IMODE(directory.stat().st_mode)
    os.chmod(directory, 0o700)
    key = directory / "signing.key"
    generate_signing_key(key)
    os.chmod(directory, mode)
    return key


def test_pubkey_of_a_fifo_exits_2_at_once(private: Path) -> None:
    fifo = private / "fifo.key"
    os.mkfifo(fifo, 0o600)
    done = crovia("pubkey", "--key", str(fifo))
    assert done.returncode == 2, done
    assert f"{fifo} is a FIFO (named pipe), not a key file" in done.stderr, done.stderr
    assert done.stdout == ""


def test_a_device_is_no_key_file(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="is a character device, not a key file"):
        load_signing_key("/dev/null")
    done = crovia("pubkey", "--key", "/dev/zero")  # would never end if it were read
    assert done.returncode == 2 and "/dev/zero is a character device" in done.stderr, done


@pytest.mark.parametrize(
    ("mode", "who"),
    [
        (0o777, "group-writable, world-writable"),
        (0o1777, "group-writable, world-writable, sticky"),
        (0o770, "group-writable"),
        (0o703, "world-writable"),
    ],
)
def test_pubkey_refuses_a_key_in_a_directory_others_can_write(
    tmp_path: Path, mode: int, who: str
) -> None:
    directory = _open_dir(tmp_path, mode)
    key = _key_in(directory)
    done = crovia("pubkey", "--key", str(key))
    assert done.returncode == 2, done
    assert f"{key} lies in {directory}, which others can write (mode {mode:o}: {who})" in (
        done.stderr
    ), done.stderr
    assert f"chmod go-w {directory}" in done.stderr
    assert done.stdout == ""
    os.chmod(directory, 0o700)  # the same key, its directory made private, loads
    assert crovia("pubkey", "--key", str(key)).returncode == 0


def test_a_link_counts_its_own_directory_and_its_target_s(tmp_path: Path, private: Path) -> None:
    open_dir = _open_dir(tmp_path, 0o777)
    exposed = _key_in(open_dir)
    link = private / "link.key"
    link.symlink_to(exposed)  # a private link to a key others can replace
    with pytest.raises(KeyFileError, match=f"lies in {open_dir}"):
        load_signing_key(link)
    into = open_dir / "into.key"
    into.symlink_to(private / "signing.key")  # a link others can replace, to a private key
    with pytest.raises(KeyFileError, match=f"lies in {open_dir}"):
        load_signing_key(into)
    inside = private / "inside.key"
    inside.symlink_to(private / "signing.key")
    assert bytes(load_signing_key(inside).verify_key) == bytes(
        load_signing_key(private / "signing.key").verify_key
    )


def test_keygen_refuses_a_directory_others_can_write_and_makes_its_own_private(
    tmp_path: Path,
) -> None:
    directory = _open_dir(tmp_path, 0o777)
    done = crovia("keygen", "--out", str(directory / "signing.key"))
    assert done.returncode == 2 and "which others can write" in done.stderr, done
    assert list(directory.iterdir()) == []  # no key, no temporary file
    fresh = tmp_path / "new" / "keys" / "signing.key"
    assert crovia("keygen", "--out", str(fresh)).returncode == 0
    assert stat.S_IMODE(fresh.parent.stat().st_mode) == 0o700
    assert crovia("pubkey", "--key", str(fresh)).returncode == 0


def _ledger(tmp_path: Path) -> dict[str, str]:
    """The environment of `tmp_path`, with a ledger of one unsealed leaf signed by its key."""
    env = crawl_env(tmp_path)
    key = load_signing_key(env["CROVIA_SIGNING_KEY_FILE"])
    with Ledger.open(tmp_path / "ledger", signing_key=key) as ledger:
        ledger.issue([sample_envelope(0)])
    return env


def test_seal_refuses_a_fifo_key_at_once(tmp_path: Path) -> None:
    env = _ledger(tmp_path)
    fifo = tmp_path / "keys" / "fifo.key"
    os.mkfifo(fifo, 0o600)
    done = crovia("seal", "--ledger-dir", str(tmp_path / "ledger"), "--key", str(fifo), env=env)
    assert done.returncode == 2, done
    assert f"{fifo} is a FIFO (named pipe), not a key file" in done.stderr, done.stderr


def test_seal_refuses_a_key_in_a_world_writable_directory(tmp_path: Path) -> None:
    env = _ledger(tmp_path)
    key = _key_in(_open_dir(tmp_path, 0o1777))
    done = crovia("seal", "--ledger-dir", str(tmp_path / "ledger"), "--key", str(key), env=env)
    assert done.returncode == 2 and "which others can write" in done.stderr, done


@pytest.mark.parametrize("kind", ["fifo", "open directory"])
def test_a_crawl_is_refused_at_once_and_fetches_nothing(
    tmp_path: Path, feed_server, kind: str
) -> None:
    if kind == "fifo":
        key = tmp_path / "fifo.key"
        os.mkfifo(key, 0o600)
        said = f"{key} is a FIFO (named pipe), not a key file"
    else:
        key = _key_in(_open_dir(tmp_path, 0o777))
        said = "which others can write"
    env = crawl_env(tmp_path, CROVIA_SIGNING_KEY_FILE=str(key))
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    try:
        proc = run_crawl(tmp_path, feeds, env=env, timeout=HANG)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the crawl hung on a key that is a {kind}")
    assert proc.returncode == 1, proc.stderr[-2000:]  # a refused crawl (docs: exit status)
    assert "signing key unusable" in proc.stderr and said in proc.stderr, proc.stderr[-2000:]
    assert feed_server.requests == []  # not even robots.txt
