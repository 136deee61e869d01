"""`crovia doctor` (issue 43, "every setting is checked before anything runs"): what a crawl will
read, checked at once, one line per problem with its fix; exit 0 clean, 1 a problem, 2 usage.

Everything is real: a crawl into a scratch ledger served on 127.0.0.1, a signing key rotated with
`crovia rotate-key`, the ledger's lock held by another process with the ledger's own lock code, a
real redis-server and `crovia sequencer`, TSAs and calendars that are loopback servers (or a
loopback port nobody listens on). Doctor never writes: the scratch tree is the same byte for byte,
time for time, after it ran.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.capture.pages import script_site
from tests.cluster.harness import Cluster
from tests.cluster.redis_server import RedisServer
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, run_crawl
from tests.feedserver import FeedServer

CLOSED = "http://127.0.0.1:1/"  # a loopback port nobody listens on


def doctor(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = crawl_env(tmp_path, CROVIA_SCHEDULE_FILE=str(tmp_path / "schedule.toml"), **env)
    for name in [name for name, value in env.items() if value is None]:
        environ.pop(name)
    return subprocess.run(
        [str(BIN / "crovia"), "doctor", *args],
        cwd=PROJECT_ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def problems(proc: subprocess.CompletedProcess[str]) -> list[str]:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("PROBLEM")]
    assert all("; fix: " in line for line in lines), lines
    assert proc.stdout.rstrip().endswith(
        f"crovia doctor: {len(lines)} problem" + "s" * (len(lines) > 1)
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return lines


def tree(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under `root` with its size, modification time and digest."""
    return {
        str(path.relative_to(root)): (
            path.stat().st_size,
            path.stat().st_mtime_ns,
            hashlib.sha256(path.read_bytes()).hexdigest(),
        )
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def crawled(tmp_path: Path, feed_server: FeedServer) -> Path:
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    proc = run_crawl(tmp_path, feeds)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return tmp_path


def test_a_crawled_ledger_is_clean_and_doctor_writes_nothing(crawled):
    before = tree(crawled)
    proc = doctor(crawled)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "crovia doctor: no problem found"
    for check in ("settings", "config", "signing key", "ledger lock", "cluster", "stamping"):
        assert f"ok       {check}: " in proc.stdout
    assert "signs " in proc.stdout and "CROVIA_REDIS_URL not set" in proc.stdout
    assert tree(crawled) == before
    shown = json.loads(doctor(crawled, "--json").stdout)
    assert shown["ok"] is True and shown["problems"] == []


def test_a_wrong_setting_and_a_misspelt_one_are_a_line_each(crawled):
    lines = problems(doctor(crawled, CROVIA_PARSE_WORKER="2", CROVIA_RECAPTURE_AFTR="1d"))
    assert lines == [
        "PROBLEM  settings: CROVIA_PARSE_WORKER is '2' (environment): it takes 0 or 1; fix: set"
        " CROVIA_PARSE_WORKER to 0 or 1, or unset it for the default ('1')",
        "PROBLEM  settings: CROVIA_RECAPTURE_AFTR is set but is no setting: nothing reads it;"
        " fix: did you mean CROVIA_RECAPTURE_AFTER? rename it",
    ]


def test_a_missing_key_and_a_key_of_another_era(crawled):
    missing = crawled / "keys" / "none.key"
    (line,) = problems(doctor(crawled, CROVIA_SIGNING_KEY_FILE=str(missing)))
    assert line.endswith(f"; fix: crovia keygen --out {missing}")
    old = crawled / "keys" / "signing.key"
    new = crawled / "keys" / "new.key"
    made = subprocess.run([str(BIN / "crovia"), "keygen", "--out", str(new)], capture_output=True)
    assert made.returncode == 0
    rotated = subprocess.run(
        [str(BIN / "crovia"), "rotate-key", "--new-key", str(new), "--key", str(old)],
        env=crawl_env(crawled), cwd=PROJECT_ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert rotated.returncode == 0, rotated.stderr
    (line,) = problems(doctor(crawled))  # the old key, still in CROVIA_SIGNING_KEY_FILE
    assert line.startswith("PROBLEM  signing key: ") and "not by the offered key" in line
    assert "fix: set CROVIA_SIGNING_KEY_FILE to the ledger's current key" in line
    assert doctor(crawled, CROVIA_SIGNING_KEY_FILE=str(new)).returncode == 0


def test_a_held_ledger_lock_names_its_holder(crawled):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from ledger.lock import acquire\n"
         f"acquire(Path({str(crawled / 'ledger' / 'ledger.lock')!r}), 5)\n"
         "print('held', flush=True); sys.stdin.read()"],
        cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        (line,) = problems(doctor(crawled))
        assert f"is held by pid {holder.pid}" in line and f"wait for pid {holder.pid}" in line
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
        holder.stdout.close()
    assert doctor(crawled).returncode == 0  # released: free again


def test_a_broken_feed_list_is_a_problem(crawled):
    (crawled / "feeds.toml").write_text('[[feeds]]\nvendor = "x"\n')
    (line,) = problems(doctor(crawled))
    assert line.startswith("PROBLEM  config: ") and "feeds.toml" in line
    assert "fix: correct it (crovia feeds check says the same)" in line


def test_stamping_services_reachable_or_not(crawled, feed_server):
    roots = crawled / "root.pem"
    roots.write_text("not a certificate\n")
    proc = doctor(
        crawled,
        CROVIA_TSA_URLS=f"{feed_server.url('tsa')},{CLOSED}tsa",
        CROVIA_OTS_CALENDARS=feed_server.url("calendar"),
        CROVIA_TSA_ROOTS=str(roots),
    )
    lines = problems(proc)
    assert len(lines) == 2
    assert f"TSA {CLOSED}tsa cannot be reached" in lines[0]
    assert "take it out of CROVIA_TSA_URLS" in lines[0]
    assert f"trusted TSA root {roots} is not PEM" in lines[1]
    assert f"ok       stamping: TSA {feed_server.url('tsa')} reachable" in proc.stdout
    assert f"ok       stamping: calendar {feed_server.url('calendar')} reachable" in proc.stdout


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def test_redis_and_its_sequencer(crawled, redis_server):
    (line,) = problems(doctor(crawled, CROVIA_REDIS_URL="redis://127.0.0.1:1/0"))
    assert "Redis at redis://127.0.0.1:1/0 cannot be used" in line
    (line,) = problems(doctor(crawled, CROVIA_REDIS_URL=redis_server.url))
    assert "no sequencer holds it" in line and "fix: start `crovia sequencer`" in line
    with Cluster(crawled, redis_server.url) as cluster:
        started = cluster.sequencer()
        deadline = time.monotonic() + 60
        while (proc := doctor(crawled, CROVIA_REDIS_URL=redis_server.url)).returncode:
            assert time.monotonic() < deadline, proc.stdout + cluster.log("sequencer")
            time.sleep(0.2)
        assert f"its sequencer is pid {started.pid} on " in proc.stdout


def test_which_sources_capture_and_which_items_are_not_followed(tmp_path):
    with FeedServer() as server:
        feeds = script_site(server)
        # Crawled with captures off: the items are issued, their pages followed by nothing.
        proc = run_crawl(tmp_path, feeds, env=crawl_env(tmp_path, CROVIA_CAPTURE="0"))
        assert proc.returncode == 0, proc.stderr[-2000:]
    (line,) = problems(doctor(tmp_path, CROVIA_CAPTURE="0"))
    assert "CROVIA_CAPTURE is 0: no page is captured, though these sources capture: lab" in line
    proc = doctor(tmp_path)
    (line,) = problems(proc)
    assert "ok       captures: 1 source(s) capture their items' pages: lab" in proc.stdout
    assert line == (
        "PROBLEM  captures: 3 item(s) of lab in the ledger are not followed by the capture book:"
        " their pages are not captured; fix: crovia capture --all lab"
    )


def test_a_usage_error_is_exit_2(tmp_path):
    proc = doctor(tmp_path, "--verbos")
    assert proc.returncode == 2 and "unknown option --verbos" in proc.stderr
