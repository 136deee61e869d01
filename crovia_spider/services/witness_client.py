"""The log's side of tlog-witness: submit a new checkpoint to each witness, collect cosignatures.

A witness that is down, slow or refusing never blocks publishing: its failure is logged and the
checkpoint goes out with the cosignatures that did come back. On 409 the witness says which size
it cosigned last; the submission is retried once with a proof from that size (tlog-witness,
"add-checkpoint").
"""

from __future__ import annotations

import http.client
import logging
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from ledger.monitor import Watchdog
from ledger.tlog.note import NoteSignature
from ledger.tlog.witness import WitnessRefusal, format_request, parse_response

TIMEOUT = 10.0
MAX_ANSWER = 1 << 16

log = logging.getLogger(__name__)

ProofFor = Callable[[int], list[bytes]]


def collect_cosignatures(
    witnesses: Sequence[str],
    note: bytes,
    old_size: int,
    new_size: int,
    proof_for: ProofFor,
    timeout: float = TIMEOUT,
) -> list[NoteSignature]:
    """Cosignature lines from every witness (base URLs) that cosigned `note` at `new_size`.

    `old_size` is the size the log believes each witness cosigned last; `proof_for(size)` gives
    the consistency proof from `size` to `new_size` ([] for 0 or `new_size`). Each submission
    takes at most `timeout` seconds, however the witness answers.
    """
    collected = []
    for base in witnesses:
        try:
            url = base.rstrip("/") + "/add-checkpoint"
            collected += _submit(url, note, old_size, new_size, proof_for, timeout)
        except _Refused as refused:
            log.warning("witness %s did not cosign size %d: %s", base, new_size, refused)
    return collected


class _Refused(Exception):
    """A witness did not cosign (down, refused, or answered nonsense)."""


def _submit(
    url: str, note: bytes, old: int, new: int, proof_for: ProofFor, timeout: float
) -> list[NoteSignature]:
    status, body = _post(url, format_request(old, proof_for(old), note), timeout)
    if status == 409:
        text = body.decode("ascii", "replace").strip()
        if not text.isdigit() or int(text) > new:
            raise _Refused(f"409 with latest size {text[:30]!r}, ahead of this log or not a size")
        status, body = _post(url, format_request(int(text), proof_for(int(text)), note), timeout)
    if status != 200:
        raise _Refused(f"HTTP {status}: {body[:200].decode('utf-8', 'replace').strip()}")
    try:
        return parse_response(body)
    except WitnessRefusal as exc:
        raise _Refused(str(exc)) from None


def _post(url: str, body: bytes, timeout: float) -> tuple[int, bytes]:
    """The status and (at most MAX_ANSWER bytes of) the body of the witness's answer, all within
    `timeout` seconds however the witness answers (the monitor's watchdog shuts the socket)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Refused(f"{url!r} is not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname, parts.port, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = {"Content-Type": "text/plain; charset=utf-8"}
    with Watchdog(connection, timeout) as watchdog:
        try:
            connection.request("POST", target, body=body, headers=headers)
            answer = connection.getresponse()
            data = answer.read(MAX_ANSWER)
            if watchdog.fired:  # the answer may have been cut short at the deadline
                raise TimeoutError
        except (OSError, http.client.HTTPException) as exc:
            if watchdog.fired:
                raise _Refused(f"timed out after {timeout:g} s") from None
            raise _Refused(f"{type(exc).__name__}: {exc}") from None
        finally:
            connection.close()
    return answer.status, data
