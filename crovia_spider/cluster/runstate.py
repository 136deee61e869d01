"""A cluster run's state, kept where only the sequencer writes: its ledger directory.

A run's id and start time end up in every leaf it signs (`parent_run_hash`) and in runs.jsonl, and
the ledger offset where it began decides which fetch records a restarted sequencer takes as
already signed. None of them may come from Redis, which anyone on the queue's network can write
(docs/cluster.md, "Who decides each signed value"): the sequencer's crawl creates them, keeps them
in `cluster-runs/<request>.json` beside the ledger (written whole, then renamed), reads them back
after a restart, and deletes them when the run is answered. Redis gets a copy for `crovia workers`
to show; that copy is never read for anything signed, and a run hash in Redis that this file does
not match is refused and named in the run record.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

RUNS_DIR = "cluster-runs"
# A request id as Redis makes it ("1733380000000-0"), or as anyone may give one to XADD.
_REQUEST = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


class RunStateError(ValueError):
    """A run state file that cannot be read as one this sequencer wrote."""


@dataclass
class RunState:
    request: str
    spider: str
    run_id: str
    started_at: str
    ledger_bytes: int | None = None  # where in the ledger the run began (set under its lock)
    jobs: dict[str, str] | None = None  # job id -> vendor, once enqueued
    # capture job id -> its pages (crovia_spider/spiders/remote.py), once enqueued
    captures: dict[str, list[dict[str, str]]] | None = None
    refused: list[str] = field(default_factory=list)  # foreign run hashes seen in Redis


def state_path(directory: Path, request: str) -> Path:
    """The state file of `request` in the ledger `directory`. Raises RunStateError for a request
    id Redis would not have made (it becomes a file name)."""
    if not _REQUEST.fullmatch(request):
        raise RunStateError(f"not a request id: {request[:80]!r}")
    return directory / RUNS_DIR / f"{request}.json"


def load(directory: Path, request: str) -> RunState | None:
    """The state of `request`, or None when this sequencer never started it."""
    path = state_path(directory, request)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        doc = orjson.loads(raw)
        state = RunState(**doc)
    except (orjson.JSONDecodeError, TypeError) as exc:
        raise RunStateError(f"{path} is not a run state: {exc}") from None
    if not _valid(state) or state.request != request:
        raise RunStateError(f"{path} is not a run state of request {request}")
    return state


def save(directory: Path, state: RunState) -> None:
    """Write `state` whole (a temporary file renamed over the old one, synced)."""
    path = state_path(directory, state.request)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    with temporary.open("wb") as out:
        out.write(orjson.dumps(asdict(state)))
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def forget(directory: Path, request: str) -> None:
    """Delete the state of an answered run."""
    with contextlib.suppress(FileNotFoundError, RunStateError):
        state_path(directory, request).unlink()


def _valid(state: RunState) -> bool:
    texts = (state.request, state.spider, state.run_id, state.started_at)
    if not all(type(value) is str and value for value in texts):
        return False
    if state.ledger_bytes is not None and (
        type(state.ledger_bytes) is not int or state.ledger_bytes < 0
    ):
        return False
    if state.jobs is not None and not _text_map(state.jobs):
        return False
    if state.captures is not None and not (
        type(state.captures) is dict
        and all(
            type(pages) is list and all(_text_map(page) for page in pages)
            for pages in state.captures.values()
        )
    ):
        return False
    return type(state.refused) is list and all(type(r) is str for r in state.refused)


def _text_map(value: Any) -> bool:
    return type(value) is dict and all(type(k) is str and type(v) is str for k, v in value.items())
