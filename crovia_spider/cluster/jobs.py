"""Fetch jobs and workers' results, as they travel through Redis, and the checks a result passes.

A job is one source of one run: the run's ids, the spider, the source's `[[feeds]]` table (read
again with the same validation as feeds.toml), the feed state a conditional GET needs, the
reading settings the fetch record signs (its entry limit), and when it expires. The sequencer
signs every job with a key of its own (the job key, never the ledger's); a worker pins that key's
public half and runs nothing else (`verified_job`), with the job's settings clamped to its own
ceilings (`clamp_settings`): whoever can write to Redis cannot send a worker anywhere or lift a
cap. A result is what a worker's crawl made of the job: the fetch record's fields, the feed's line
of the run record, the items' fields, and every body they cite, each under its sha256. A capture
job is the same with `captures`, the pages of its source to capture (the capture book's Job each):
its result is each page's facts with its body and heads under their sha256
(crovia_spider/spiders/verdict.py, `capture_pages`).

A result comes from a machine that holds no key and is trusted with nothing (docs/cluster.md,
"Who decides each signed value"): `decode_result` takes only the fields a result has, bodies under
their digest and the caps, `check_fields` holds every field to the type of the dataclass it fills;
the sequencer then reads the bodies again itself (crovia_spider/spiders/remote.py). A result that
fails is refused whole with one line saying why (the sequencer records it; nothing of it is
signed).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import re
import time
import types
import typing
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import nacl.exceptions
import nacl.signing
import orjson

from crovia_spider.config.feeds import FeedConfig, feed_from_table
from ledger.records.capture import URL_CHARS

JOB_SCHEMA = "crovia.job.v2"
# What the job key signs: this prefix, then the job's JSON, so a job signature is never valid as
# anything else (and the ledger's key never signs a job).
JOB_SIGNED_PREFIX = JOB_SCHEMA.encode() + b"\n"
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
    "CROVIA_CAPTURE_MAX_BYTES",
)
# Of those, the ones where 0 means "no cap" to Scrapy: a job can never ask for that.
_ZERO_IS_NO_CAP = frozenset(("DOWNLOAD_MAXSIZE", "CROVIA_CAPTURE_MAX_BYTES"))
# Of those, the ones that must stay above 0 (the parser worker's ceilings).
_ABOVE_ZERO = frozenset(("CROVIA_PARSE_MEMORY_MB", "CROVIA_PARSE_SECONDS"))
# A capture job's pages (the capture book's Job: crovia_spider/capture/book.py): each field a
# string, at most CAPTURE_PAGES_MAX a job (the sequencer groups a source's pages by
# CAPTURE_PAGES_PER_JOB), a URL at most URL_CHARS (what a capture record signs of one).
CAPTURE_FIELDS = ("key", "item", "url", "vendor", "spider")
CAPTURE_PAGES_PER_JOB = 20
CAPTURE_PAGES_MAX = 100
# A result's JSON (the items' fields) and a body: refused beyond these before being parsed.
RESULT_JSON_MAX = 256 << 20
BODY_FIELD = b"body:"
_BODY_NAME = re.compile(rb"body:[0-9a-f]{64}")
_RESULT_FIELDS = frozenset((b"job", b"worker", b"result"))
_PORTS = {"http": 80, "https": 443}


class ResultRefused(ValueError):
    """A worker's result that is not signed: the message says why, in one line."""


class JobRefused(ValueError):
    """A job a worker does not run: unsigned, signed by another key, expired or malformed."""


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
    expires: int = 0  # Unix time after which no worker runs it (a replayed old job)
    # A capture job: the pages of the source to capture (CAPTURE_FIELDS each), not its feed.
    captures: tuple[dict[str, str], ...] = ()

    def encode(self) -> bytes:
        # A feed job's JSON is what it was before captures travelled: no `captures` key.
        extra = {"captures": list(self.captures)} if self.captures else {}
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
                "expires": self.expires,
                **extra,
            }
        )

    def signed(self, key: nacl.signing.SigningKey) -> dict[bytes, bytes]:
        """The jobs-stream message of this job: its JSON and the job key's signature of it."""
        raw = self.encode()
        signature = key.sign(JOB_SIGNED_PREFIX + raw).signature
        return {b"job": raw, b"sig": signature.hex().encode()}


def verified_job(
    fields: Mapping[bytes, bytes], pin: nacl.signing.VerifyKey, now: float | None = None
) -> Job:
    """The Job of a jobs-stream message signed by the pinned sequencer key `pin` and not expired.
    Raises JobRefused saying why (in one line, naming no secret)."""
    raw, signature = fields.get(b"job", b""), fields.get(b"sig", b"")
    if not signature:
        raise JobRefused("an unsigned job (not from this cluster's sequencer)")
    try:
        pin.verify(JOB_SIGNED_PREFIX + raw, bytes.fromhex(signature.decode("ascii")))
    except (nacl.exceptions.BadSignatureError, ValueError, UnicodeDecodeError):
        raise JobRefused("a job not signed by the pinned sequencer key") from None
    try:
        job = decode_job(raw)
    except ValueError as exc:
        raise JobRefused(str(exc)) from None
    if job.expires < (time.time() if now is None else now):
        raise JobRefused(f"a job that expired at {job.expires} (Unix time)")
    return job


def clamp_settings(asked: Mapping[str, str], own: Mapping[str, Any]) -> dict[str, str]:
    """A job's settings held to the worker's own ceilings `own` (its settings.py, environment and
    command line): each the smaller of the two, never "no cap" (0 for DOWNLOAD_MAXSIZE), never
    below 1 where 0 means nothing could be read. A value that is not a number is the worker's."""
    clamped: dict[str, str] = {}
    for name, value in asked.items():
        mine, theirs = _ceiling(name, own.get(name)), _ceiling(name, value)
        chosen = mine if theirs is None else theirs if mine is None else min(mine, theirs)
        if chosen is not None and not math.isinf(chosen):
            clamped[name] = f"{chosen:g}" if isinstance(chosen, float) else str(chosen)
    return clamped


def _ceiling(name: str, value: Any) -> int | float | None:
    """`value` as a ceiling: inf for no cap, None for no usable value."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number):
        return None
    if name in _ZERO_IS_NO_CAP and number <= 0:
        return math.inf
    if number < 0 or (name in _ABOVE_ZERO and number <= 0):
        return None
    if name == "CROVIA_PARSE_SECONDS" or math.isinf(number):
        return number
    return int(number)


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
    if type(doc.get("expires")) is not int:
        raise ValueError("a job without its expiry")
    try:
        feed = feed_from_table(doc["feed"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a job whose feed is not valid: {exc}") from None
    captures = _captures(doc.get("captures", []), feed.vendor, doc["spider"])
    return Job(
        doc["request"], doc["run_id"], doc["started_at"], doc["spider"], feed, doc["state"],
        settings, doc["expires"], captures,
    )  # fmt: skip


def _captures(pages: Any, vendor: str, spider: str) -> tuple[dict[str, str], ...]:
    """A capture job's pages: a list of CAPTURE_FIELDS objects of the job's source and spider,
    each page once, http(s) URLs; ValueError saying what is wrong."""
    if type(pages) is not list or len(pages) > CAPTURE_PAGES_MAX:
        raise ValueError(f"a job whose captures are not a list of at most {CAPTURE_PAGES_MAX}")
    seen: set[str] = set()
    for page in pages:
        if (
            type(page) is not dict
            or sorted(page) != sorted(CAPTURE_FIELDS)
            or any(type(v) is not str or not v for v in page.values())
        ):
            raise ValueError("a job with a capture that is not a page (key, item, url, ...)")
        if (page["vendor"], page["spider"]) != (vendor, spider):
            raise ValueError("a job with a capture of another source")
        if len(page["url"]) > URL_CHARS or urlsplit(page["url"]).scheme not in _PORTS:
            raise ValueError(f"a job with a capture of no http(s) URL: {page['url'][:80]!r}")
        if page["key"] in seen:
            raise ValueError("a job naming a page twice")
        seen.add(page["key"])
    return tuple(pages)


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
    fields: dict[bytes, bytes], body_cap: int, result_cap: int | None = None
) -> tuple[str, str, dict[str, Any], dict[str, bytes]]:
    """(job id, worker, result, bodies) of a results-stream message: only a result's fields
    (job, worker, result, `body:SHA256`), `result_cap` bytes in all, every body checked against
    its digest and `body_cap`. Raises ResultRefused."""
    size = sum(len(name) + len(value) for name, value in fields.items())
    if result_cap is not None and size > result_cap:
        raise ResultRefused(f"a result of {size:,} bytes, over the cap of {result_cap:,}")
    for name in fields:
        if name not in _RESULT_FIELDS and not _BODY_NAME.fullmatch(name):
            raise ResultRefused(f"a result with a field it may not have: {name[:80]!r}")
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
    hints, fields = _fields_of(cls)
    names = [name for name in fields if name not in leave_out]
    extra = sorted(set(data) - set(names))
    if extra:
        raise ResultRefused(f"{what} has fields it may not have: {', '.join(extra)[:200]}")
    for name in names:
        if name not in data:
            raise ResultRefused(f"{what} lacks {name}")
        if not _is(data[name], hints[name]):
            raise ResultRefused(f"{what}: {name} is not of the type {_shown(hints[name])}")
    return data


@functools.cache
def _fields_of(cls: type) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A dataclass's resolved type hints and field names (resolving them costs more than the
    checks of a whole result: once a class)."""
    return typing.get_type_hints(cls), tuple(f.name for f in dataclasses.fields(cls))


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


def parse_allowed(values: list[str] | tuple[str, ...] | str) -> frozenset[tuple[str, int | None]]:
    """`--allow-private HOST[:PORT]` values (or one comma-separated setting) as (host, port)
    pairs, port None for every port of the host. Raises ValueError for one that is not."""
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    allowed = set()
    for value in values:
        value = value.strip()
        try:
            parts = urlsplit(f"http://{value}/")
            host, port = (parts.hostname or "").rstrip("."), parts.port
        except ValueError as exc:
            raise ValueError(f"not HOST[:PORT]: {value!r} ({exc})") from None
        if not host or "/" in value or "@" in value:
            raise ValueError(f"not HOST[:PORT]: {value!r}")
        allowed.add((host, port))
    return frozenset(allowed)


def is_allowed(url: str, allowed: frozenset[tuple[str, int | None]]) -> bool:
    """True when `url`'s host (and port, where one was given) is one of `allowed`."""
    try:
        parts = urlsplit(url)
        host, port = (parts.hostname or "").rstrip("."), parts.port or _PORTS.get(parts.scheme)
    except ValueError:
        return False
    return (host, None) in allowed or (host, port) in allowed


def pinned_key(value: str) -> nacl.signing.VerifyKey:
    """The sequencer's public job key a worker pins (64 hex). Raises ValueError."""
    if not re.fullmatch(r"[0-9a-fA-F]{64}", value or ""):
        raise ValueError(
            "a worker runs only jobs its sequencer signed: pin the sequencer's job key with"
            " --sequencer-key FILE (or CROVIA_SEQUENCER_KEY)"
        )
    return nacl.signing.VerifyKey(bytes.fromhex(value))
