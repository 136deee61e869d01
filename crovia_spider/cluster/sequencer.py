"""`crovia sequencer`: the one process of a cluster that holds the signing key and the ledger.

It refuses to start, writing nothing, unless it is the only one:
- the ledger directory's `sequencer.lock` (flock, as the ledger's own lock: released by the kernel
  when the holder dies) names the one running on this ledger;
- the claim `crovia:sequencer` in Redis (a value with a lifetime the sequencer renews) names the one
  running against this Redis. A claim naming this host and this ledger is a dead sequencer's (this
  one holds the ledger's lock), and is taken over at once;
- the newest checkpoint Redis holds (`crovia:checkpoint`, "LEAF_COUNT ROOT" of the newest seal)
  must be one this ledger sealed: a second sequencer on a copy of the ledger, or on another one,
  never writes the cluster's log (Sunlight guards against a split log the same way). After each
  run the sequencer moves it to its new seal with a compare-and-swap: had anyone else moved it,
  it stops.

It signs every fetch job with a key of its own, the job key (CROVIA_JOB_KEY_FILE, made at the
first start with its public half beside it as `KEY.pub`), never with the ledger's: workers pin
that public key and run nothing else (crovia_spider/cluster/jobs.py). Each run's id, start time,
jobs and ledger offset are kept in its ledger directory (crovia_spider/cluster/runstate.py), never
taken from Redis.

Then it takes crawl requests (`crovia crawl --redis`, one per spider) from the sequencer's consumer
group, its own pending ones first (a request it took before being killed), and runs each as a
`scrapy crawl SPIDER` child in the sequencer role (crovia_spider/spiders/remote.py): the run's
jobs go to the workers, their results are checked, and the pipelines fingerprint, dedupe,
classify, sign, append and seal exactly as in a local crawl. When the child has written the run
record, the request is answered (its run record and exit status, for the waiting `crawl`) and
acknowledged.

It rides out a Redis restart or failover (crovia_spider/cluster/connection.py): its commands and
its child's are retried with backoff while Redis is gone, one line logged when it goes and one
when it is back; a claim that lapsed meanwhile (nobody else took it) is taken again.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crovia_spider.cluster import keys, runstate
from crovia_spider.cluster.connection import ClusterError, connect, ensure_group, text
from crovia_spider.cluster.jobs import SPIDER_NAME
from crovia_spider.deathsig import preexec
from crovia_spider.options import path_default, project_root
from crovia_spider.runs.runlog import utc_now_micro
from crovia_spider.schedule.children import crawl_command
from ledger import jsonl
from ledger.exceptions import KeyFileError, LedgerLocked
from ledger.keys import generate_signing_key, load_signing_key
from ledger.lock import acquire, release
from ledger.store import RUNS_FILE, SEALS_FILE

log = logging.getLogger(__name__)
LOCK_FILE = "sequencer.lock"
CONSUMER = "sequencer"  # one name, so a restarted sequencer finds its own pending requests
# A request's spider, vendors and skip patterns: what `scrapy crawl` takes, nothing else.
_PATTERNS = re.compile(r"[A-Za-z0-9_*?\[\],!-]{0,2000}")
# How long the answer of a run waits in Redis for its `crawl --redis`.
ANSWER_SECONDS = 86_400
# How long `wait_answer` blocks in one BLPOP: well under the client's socket timeout, so a long
# wait is many short ones and never reads as a dead connection.
ANSWER_POLL = 5
# Lua: renew the claim while it is still ours, or take it again if it lapsed (Redis was gone
# longer than its lifetime) and nobody else took it.
_RENEW = """
local now = redis.call('GET', KEYS[1])
if now == ARGV[1] or now == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
# Lua: move the checkpoint from ARGV[1] ("" when there was none) to ARGV[2], or refuse.
_SWAP = """
local now = redis.call('GET', KEYS[1])
if (now == false and ARGV[1] == '') or now == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0
"""


@dataclass
class SequencerOptions:
    url: str
    ledger_dir: Path
    claim_seconds: float = 15.0  # the claim's lifetime; renewed every third of it
    settings: list[str] = field(default_factory=list)  # extra `-s NAME=VALUE` for children
    once: bool = False  # stop when no request is waiting (tests, a run by hand)
    job_key: Path | None = None  # CROVIA_JOB_KEY_FILE: the key that signs jobs (made if absent)
    signing_key: Path | None = None  # the ledger's key, which must not be the job key


def seals_of(directory: Path) -> list[str]:
    """Every seal of the ledger in `directory` as "LEAF_COUNT ROOT", oldest first."""
    found = []
    for _, line in jsonl.iter_lines(directory / SEALS_FILE):
        try:
            found.append(_checkpoint(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            continue  # crovia audit says more
    return found


def newest_seal(directory: Path) -> str:
    """The newest seal as "LEAF_COUNT ROOT"; "" when there is none (or it cannot be read)."""
    try:
        seal = jsonl.last_line(directory / SEALS_FILE)
        return _checkpoint(seal) if seal else ""
    except (ValueError, KeyError, TypeError):
        return ""  # crovia audit says more


def _checkpoint(seal: dict[str, Any]) -> str:
    return f"{int(seal['leaf_count'])} {seal['merkle_root']}"


class Sequencer:
    def __init__(self, options: SequencerOptions) -> None:
        self.options = options
        self.directory = options.ledger_dir.resolve()
        self.stopping = False
        self.redis = connect(options.url, ride_out=True, stop=lambda: self.stopping)
        self.host = socket.gethostname()
        self.lock_fd: int | None = None
        self.claim = ""
        self.checkpoint = ""
        self.child: subprocess.Popen[bytes] | None = None
        self._renew = self.redis.register_script(_RENEW)
        self._swap = self.redis.register_script(_SWAP)
        self.job_key_path = (options.job_key or path_default("CROVIA_JOB_KEY_FILE")).resolve()
        self.job_public = job_public_key(self.job_key_path, options.signing_key)

    # -- being the only one -------------------------------------------------------------------

    def take_office(self) -> None:
        """Take the ledger's sequencer lock, the Redis claim and check the checkpoint; raise
        ClusterError naming the sequencer that holds either, having written nothing."""
        other = self._claimed()
        if other and not self.directory.exists():
            # A ledger that does not exist yet is not the running sequencer's: refused below
            # anyway, so said before a directory is made.
            raise ClusterError(
                f"another sequencer runs against this Redis: {_described(other)}. Nothing was"
                " written."
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self.lock_fd = acquire(self.directory / LOCK_FILE, 0)
        except LedgerLocked as exc:
            other = self._claimed()
            holder = _described(other) if other.get("ledger") == str(self.directory) else exc
            raise ClusterError(
                f"another sequencer runs on the ledger {self.directory}: {holder}. Nothing was"
                " written."
            ) from None
        try:
            self._claim()
            self._check_checkpoint()
        except BaseException:
            self.leave_office()
            raise

    def _claim(self) -> None:
        value = json.dumps(
            {
                "host": self.host,
                "pid": os.getpid(),
                "ledger": str(self.directory),
                "started": utc_now_micro(),
                "token": secrets.token_hex(8),
            }
        )
        ttl = int(self.options.claim_seconds * 1000)
        for _ in range(3):
            if self.redis.set(keys.SEQUENCER, value, nx=True, px=ttl):
                self.claim = value
                return
            other = self._claimed()
            if not other:
                continue  # expired meanwhile: try again
            if other.get("host") == self.host and other.get("ledger") == str(self.directory):
                # Ours, left by a sequencer that died: we hold this ledger's lock.
                self.redis.set(keys.SEQUENCER, value, px=ttl)
                self.claim = value
                log.warning("took over the claim of a sequencer that died (pid %s)",
                            other.get("pid"))  # fmt: skip
                return
            raise ClusterError(
                f"another sequencer runs against this Redis: {_described(other)}. Nothing was"
                " written."
            )
        raise ClusterError("the sequencer claim in Redis keeps changing: is another starting?")

    def _claimed(self) -> dict[str, Any]:
        """The claim in Redis ({} when there is none; an unreadable one as "?")."""
        held = text(self.redis.get(keys.SEQUENCER))
        try:
            other = json.loads(held) if held else {}
        except ValueError:
            other = None
        return other if isinstance(other, dict) else {"host": "?"}

    def _check_checkpoint(self) -> None:
        held = text(self.redis.get(keys.CHECKPOINT))
        seals = seals_of(self.directory)
        if held and held not in seals:
            size, _, root = held.partition(" ")
            raise ClusterError(
                f"Redis's newest checkpoint ({size} leaves, root {root[:16]}...) is not a seal of"
                f" the ledger {self.directory}: another sequencer writes this cluster's log, or"
                " this ledger is a copy behind it. Nothing was written."
            )
        self.checkpoint = held
        if seals and seals[-1] != held:
            self._move_checkpoint(seals[-1])

    def _move_checkpoint(self, newest: str) -> None:
        if not self._swap(keys=[keys.CHECKPOINT], args=[self.checkpoint, newest]):
            raise ClusterError(
                "the checkpoint in Redis was moved by someone else: another sequencer writes"
                " this cluster's log; stopping"
            )
        self.checkpoint = newest

    def renew(self) -> None:
        ttl = int(self.options.claim_seconds * 1000)
        if not self._renew(keys=[keys.SEQUENCER], args=[self.claim, ttl]):
            raise ClusterError("the sequencer's claim in Redis was lost (taken by another?)")

    def leave_office(self) -> None:
        import redis

        if self.claim:
            try:
                self.redis.eval(
                    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end",
                    1, keys.SEQUENCER, self.claim,
                )  # fmt: skip
            except redis.RedisError:  # only when stopping: retried for ever otherwise
                log.warning("the sequencer's claim in Redis expires by itself")
            self.claim = ""
        if self.lock_fd is not None:
            release(self.lock_fd)
            self.lock_fd = None

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> int:
        import redis

        self.take_office()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._stop)
        ensure_group(self.redis, keys.RUNS, keys.RUNS_GROUP)
        log.warning("sequencer on %s takes crawl requests from %s", self.directory, keys.RUNS)
        log.warning("its jobs are signed by the job key %s: workers pin its public key, %s"
                    " (crovia worker --sequencer-key %s.pub)", self.job_key_path, self.job_public,
                    self.job_key_path)  # fmt: skip
        try:
            while not self.stopping:
                self.renew()
                request = self._next_request()
                if request is None:
                    if self.options.once:
                        break
                    continue
                self.sequence(*request)
        except redis.RedisError as exc:
            if not self.stopping:
                raise
            log.warning("sequencer stops with Redis unreachable (%s): a run it held is taken up"
                        " by the next sequencer", exc)  # fmt: skip
        finally:
            self.leave_office()
        return 0

    def _stop(self, signum: int, frame: Any) -> None:
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def _next_request(self) -> tuple[str, dict[bytes, bytes]] | None:
        for start, block in (("0", None), (">", 0 if self.options.once else 2000)):
            answer = self.redis.xreadgroup(
                keys.RUNS_GROUP, CONSUMER, {keys.RUNS: start}, count=1,
                block=block if block else None,
            )  # fmt: skip
            for _, messages in answer or ():
                for message_id, fields in messages:
                    if fields:
                        return text(message_id), fields
                    self.redis.xack(keys.RUNS, keys.RUNS_GROUP, message_id)  # deleted
        return None

    def sequence(self, request_id: str, fields: dict[bytes, bytes]) -> None:
        """Run one crawl request as a child in the sequencer role, then answer it."""
        try:
            request = json.loads(fields.get(b"request", b"{}"))
            spider, vendor, skip = request["spider"], request.get("vendor", ""), request.get(
                "skip", "")  # fmt: skip
            if not all(type(v) is str for v in (spider, vendor, skip)):
                raise TypeError("not text")
            if not SPIDER_NAME.fullmatch(spider) or not all(
                _PATTERNS.fullmatch(v) for v in (vendor, skip)
            ):
                raise ValueError("not a spider name and vendor patterns")
        except (ValueError, KeyError, TypeError) as exc:
            log.error("crawl request %s refused: %s", request_id, exc)
            self._answer(request_id, {"exit": 2, "error": f"request refused: {exc}"})
            return
        dropped = self._dropped(request_id, request.get("deadline"))
        if dropped:
            log.warning("crawl request %s dropped: %s", request_id, dropped)
            self._answer(request_id, {"exit": 2, "error": f"request dropped: {dropped}"})
            return
        argv = [*crawl_command(), "crawl", spider]
        if vendor:
            argv += ["-a", f"vendor={vendor}"]
        if skip:
            argv += ["-a", f"skip={skip}"]
        pairs = ("CROVIA_REDIS_ROLE=sequencer", f"CROVIA_REDIS_RUN={request_id}",
                 f"CROVIA_LEDGER_DIR={self.directory}",
                 f"CROVIA_JOB_KEY_FILE={self.job_key_path}")  # fmt: skip
        for pair in (*pairs, *self.options.settings):
            argv += ["-s", pair]
        env = {**os.environ, "CROVIA_REDIS_URL": self.options.url}
        runs_from = jsonl.complete_size_or_zero(self.directory / RUNS_FILE)  # its record follows
        self.child = subprocess.Popen(argv, cwd=project_root(), env=env, preexec_fn=preexec())
        status = self._wait_child()
        self.child = None
        if self.stopping:
            return  # not answered: the next sequencer takes the run up where it is
        newest = newest_seal(self.directory)
        if newest and newest != self.checkpoint:
            self._move_checkpoint(newest)
        try:
            mine = runstate.load(self.directory, request_id)
        except runstate.RunStateError as exc:
            log.error("request %s: %s", request_id, exc)
            mine = None
        run_id = mine.run_id if mine else ""  # never Redis's word: anyone can write there
        record = self._run_record(run_id, runs_from)
        self._answer(request_id, {"exit": status, "run": record})
        runstate.forget(self.directory, request_id)

    def _dropped(self, request_id: str, deadline: Any) -> str:
        """Why a request is not run ("" when it is): its requester cancelled it, or nobody took
        it before its deadline (a `crawl --redis` that stopped waiting, or a request left
        queued while no sequencer ran): never run later than its requester waited."""
        if self.redis.exists(keys.cancel_key(request_id)):
            return "cancelled by its requester"
        if type(deadline) in (int, float) and deadline and time.time() > deadline:
            return f"not taken before its deadline ({deadline:.0f}, Unix time)"
        return ""

    def _wait_child(self) -> int:
        import redis

        assert self.child is not None
        while True:
            try:
                status = self.child.wait(timeout=self.options.claim_seconds / 3)
                return status if status >= 0 else 128 - status
            except subprocess.TimeoutExpired:
                try:
                    self.renew()
                except redis.RedisError:
                    if not self.stopping:
                        raise
                    # Asked to stop, its crawl stopping too: waited for, whatever Redis does.

    def _run_record(self, run_id: str, since: int) -> dict[str, Any] | None:
        """The run record of `run_id` among those appended past byte `since` of runs.jsonl."""
        needle = run_id.encode()
        for _, line in jsonl.iter_lines(self.directory / RUNS_FILE, since) if run_id else ():
            if needle in line:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("run_id") == run_id:
                    return record
        return None

    def _answer(self, request_id: str, answer: dict[str, Any]) -> None:
        done = keys.done_key(request_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(done)
        pipe.rpush(done, json.dumps(answer))
        pipe.expire(done, ANSWER_SECONDS)
        pipe.xack(keys.RUNS, keys.RUNS_GROUP, request_id)
        pipe.xdel(keys.RUNS, request_id)
        pipe.delete(keys.results_key(request_id))
        pipe.expire(keys.run_key(request_id), ANSWER_SECONDS)
        pipe.execute()


def job_public_key(path: Path, signing_key: Path | None) -> str:
    """The public key (64 hex) of the job key at `path`, made (0600, its public half written to
    `path`.pub) when there is none yet. Raises ClusterError when it cannot be read, or is the
    ledger's own key: a job signature must never be something the ledger's key made."""
    try:
        if not path.exists():
            key = generate_signing_key(path)
            public = bytes(key.verify_key).hex()
            path.with_name(path.name + ".pub").write_text(public + "\n")
            log.warning("made the job key %s (its public key is in %s.pub)", path, path)
        key = load_signing_key(path)
    except (KeyFileError, OSError) as exc:
        raise ClusterError(f"the job key cannot be used: {exc}") from None
    public = bytes(key.verify_key).hex()
    if signing_key is not None and signing_key.exists():
        try:
            ledger_public = bytes(load_signing_key(signing_key).verify_key).hex()
        except (KeyFileError, OSError):
            ledger_public = ""  # the crawl says why the ledger's key cannot be read
        if ledger_public == public:
            raise ClusterError(
                f"the job key {path} is the ledger's signing key: give jobs a key of their own"
                " (CROVIA_JOB_KEY_FILE)"
            )
    return public


def _described(claim: dict[str, Any]) -> str:
    """A sequencer's claim, for a message: where it runs and since when."""
    return (
        f"host {claim.get('host', '?')}, pid {claim.get('pid', '?')}, ledger"
        f" {claim.get('ledger', '?')}, since {claim.get('started', '?')}"
    )


def request_crawl(
    client: Any, spider: str, vendor: str = "", skip: str = "", deadline: float = 0
) -> str:
    """Post a crawl request for the sequencer; its id (wait on `keys.done_key(id)`). A sequencer
    that takes it after `deadline` (Unix time; 0: none) drops it unrun."""
    ensure_group(client, keys.RUNS, keys.RUNS_GROUP)
    body = {"spider": spider, "vendor": vendor, "skip": skip, "requested_at": utc_now_micro(),
            "deadline": int(deadline)}  # fmt: skip
    return text(client.xadd(keys.RUNS, {"request": json.dumps(body)}))


def request_taken(client: Any, request_id: str) -> bool:
    """True once a sequencer has taken the request (it is pending with the sequencers' group)."""
    found = client.xpending_range(keys.RUNS, keys.RUNS_GROUP, request_id, request_id, 1)
    return bool(found)


def cancel_request(client: Any, request_id: str) -> bool:
    """Cancel a request: never run if no sequencer took it yet (deleted), else its run stops.
    True when it was deleted before any sequencer took it."""
    client.set(keys.cancel_key(request_id), 1, ex=ANSWER_SECONDS)  # first: no race with a take
    if request_taken(client, request_id):
        return False
    client.xdel(keys.RUNS, request_id)
    return True


def wait_answer(client: Any, request_id: str, timeout: float = 0) -> dict[str, Any] | None:
    """The sequencer's answer to a request (waits; `timeout` seconds, 0 for ever), or None."""
    deadline = time.monotonic() + timeout
    while True:
        wait = ANSWER_POLL if not timeout else min(ANSWER_POLL, deadline - time.monotonic())
        if wait <= 0:
            return None
        found = client.blpop([keys.done_key(request_id)], timeout=max(1, int(wait)))
        if found is not None:
            break
    client.rpush(keys.done_key(request_id), found[1])  # left for anyone else asking
    return json.loads(found[1])
