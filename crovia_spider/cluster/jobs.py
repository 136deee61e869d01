"""Fetch jobs and workers' results, as they travel through Redis, and the checks a result passes.

A job is one source of one run: the run's ids, the spider, the source's `[[feeds]]` table (read
again with the same validation as feeds.toml), the feed state a conditional GET needs, and the
reading settings the fetch record signs (its entry limit). A result is what a worker's crawl made
of the job: the fetch record's fields, the feed's line of the run record, the items' fields, and
every body they cite, each under its sha256.

A result comes from a machine that holds no key and is trusted with nothing (docs/cluster.md,
"What a worker can do"): `check_fields` holds every field to the type of the dataclass it fills,
`check_bodies` every body to its digest and size cap, before anything is signed. A result that
fails is refused whole with one line saying why (the sequencer records it; nothing of it is
signed).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import types
import typing
from typing import Any

import orjson

from crovia_spider.config.feeds import FeedConfig, feed_from_table

JOB_SCHEMA = "crovia.job.v1"
# A spider's name as feeds.toml allows it (a job's becomes a command line's word).
SPIDER_NAME = re.compile(r"[a-z0-9][a-z0-9_]{0,99}")
RESULT_SCHEMA = "crovia.result.v1"
# The settings a job carries to the worker's crawl: how a body is read and what its fetch record
# signs (the entry limits), so every worker reads a source as the sequencer's config says.
JOB_SETTINGS = (
    "CROVIA_MAX_ENTRIES_PER_FEED",
    "CROVIA_MAX_SITEMAP_URLS",
    "CROVIA_SITEMAP_FETCHES",
    "CROVIA_SITEMAP_DEPTH",
    "CROVIA_SITEMAP_BYTES",
    "CROVIA_PARSE_MEMORY_MB",
    "CROVIA_PARSE_SECONDS",
    "DOWNLOAD_MAXSIZE",
)
# A result's JSON (the items' fields) and a body: refused beyond these before being parsed.
RESULT_JSON_MAX = 256 << 20
BODY_FIELD = b"body:"


class ResultRefused(ValueError):
    """A worker's result that is not signed: the message says why, in one line."""


def feed_table(feed: FeedConfig) -> dict[str, Any]:
    """`feed` as the `[[feeds]]` table it was read from (only the keys that differ from the
    defaults), which `feed_from_table` reads back to the same FeedConfig."""
    table: dict[str, Any] = {}
    for item in dataclasses.fields(FeedConfig):
        value = getattr(feed, item.name)
        if value == item.default:
            continue
        if item.name == "selectors":
            value = dict(value)
        elif isinstance(value, tuple):
            value = list(value)
        table[item.name] = value
    return table


@dataclasses.dataclass(frozen=True)
class Job:
    """One source of one run, for one worker's crawl."""

    request: str  # the run's request id (its Redis stream id)
    run_id: str
    started_at: str
    spider: str
    feed: FeedConfig
    state: dict[str, Any]  # the feed state entry of the source (validators, last body)
    settings: dict[str, str]

    def encode(self) -> bytes:
        return orjson.dumps(
            {
                "schema": JOB_SCHEMA,
                "request": self.request,
                "run_id": self.run_id,
                "started_at": self.started_at,
                "spider": self.spider,
                "feed": feed_table(self.feed),
                "state": self.state,
                "settings": self.settings,
            }
        )


def decode_job(raw: bytes) -> Job:
    """The Job of a jobs-stream message's `job` field; ValueError saying what is wrong."""
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"a job that is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != JOB_SCHEMA:
        raise ValueError("not a job of this version (schema)")
    for key in ("request", "run_id", "started_at", "spider"):
        if type(doc.get(key)) is not str or not doc[key]:
            raise ValueError(f"a job without {key}")
    if not SPIDER_NAME.fullmatch(doc["spider"]):
        raise ValueError(f"a job naming no spider: {doc['spider'][:80]!r}")
    if type(doc.get("feed")) is not dict or type(doc.get("state")) is not dict:
        raise ValueError("a job without its feed")
    settings = doc.get("settings")
    if type(settings) is not dict or any(
        name not in JOB_SETTINGS or type(value) is not str for name, value in settings.items()
    ):
        raise ValueError("a job with settings other than JOB_SETTINGS")
    try:
        feed = feed_from_table(doc["feed"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a job whose feed is not valid: {exc}") from None
    return Job(
        doc["request"], doc["run_id"], doc["started_at"], doc["spider"], feed, doc["state"],
        settings,
    )  # fmt: skip


def encode_result(
    job_id: str, worker: str, result: dict[str, Any], bodies: dict[str, bytes]
) -> dict[bytes, bytes]:
    """The fields of a results-stream message: the job's id, the worker, the result's JSON and
    each body under `body:SHA256`."""
    fields = {
        b"job": job_id.encode(),
        b"worker": worker.encode(),
        b"result": orjson.dumps({"schema": RESULT_SCHEMA, **result}),
    }
    for digest, body in bodies.items():
        fields[BODY_FIELD + digest.encode()] = body
    return fields


def decode_result(
    fields: dict[bytes, bytes], body_cap: int
) -> tuple[str, str, dict[str, Any], dict[str, bytes]]:
    """(job id, worker, result, bodies) of a results-stream message, every body checked against
    its digest and `body_cap`. Raises ResultRefused."""
    job = fields.get(b"job", b"").decode("ascii", "replace")
    worker = fields.get(b"worker", b"").decode("utf-8", "replace")[:200]
    raw = fields.get(b"result", b"")
    if len(raw) > RESULT_JSON_MAX:
        raise ResultRefused(f"a result of {len(raw):,} bytes of JSON (cap {RESULT_JSON_MAX:,})")
    try:
        result = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ResultRefused(f"a result that is not JSON: {exc}") from None
    if type(result) is not dict or result.get("schema") != RESULT_SCHEMA:
        raise ResultRefused("a result that is not a crovia.result.v1 object")
    bodies: dict[str, bytes] = {}
    for name, body in fields.items():
        if not name.startswith(BODY_FIELD):
            continue
        digest = name[len(BODY_FIELD) :].decode("ascii", "replace")
        if len(body) > body_cap:
            raise ResultRefused(f"a body of {len(body):,} bytes, over the cap of {body_cap:,}")
        if hashlib.sha256(body).hexdigest() != digest:
            raise ResultRefused(f"a body that does not match its digest {digest[:64]!r}")
        bodies[digest] = body
    return job, worker, result, bodies


def check_fields(cls: type, data: Any, what: str, leave_out: tuple[str, ...] = ()) -> dict:
    """`data` as the keyword arguments of dataclass `cls`: a JSON object with every field of
    `cls` but `leave_out`, none else, each of its annotated type (an int is never a bool, a
    `dict[str, int]` holds only those). Raises ResultRefused naming `what` and the field."""
    if type(data) is not dict:
        raise ResultRefused(f"{what} is not an object")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.name not in leave_out]
    extra = sorted(set(data) - set(names))
    if extra:
        raise ResultRefused(f"{what} has fields it may not have: {', '.join(extra)[:200]}")
    for name in names:
        if name not in data:
            raise ResultRefused(f"{what} lacks {name}")
        if not _is(data[name], hints[name]):
            raise ResultRefused(f"{what}: {name} is not of the type {_shown(hints[name])}")
    return data


def _is(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_is(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint in (int, float):
        return type(value) is int or (hint is float and type(value) is float)
    if hint in (str, bool):
        return type(value) is hint
    if origin is list:
        (arg,) = typing.get_args(hint) or (Any,)
        return type(value) is list and all(_is(v, arg) for v in value)
    if origin is dict or hint is dict:
        key, arg = typing.get_args(hint) or (str, Any)
        return type(value) is dict and all(_is(k, key) and _is(v, arg) for k, v in value.items())
    return False


def _shown(hint: Any) -> str:
    """A type as Python writes it: `int | None`, `dict[str, int]`, `str`."""
    return (
        getattr(hint, "__name__", None)
        if isinstance(hint, type)
        else (str(hint).replace("typing.", ""))
    )
