"""The log's side of tlog-witness: submit a new checkpoint to each witness, collect cosignatures.

A witness that is down, slow or refusing never blocks publishing: its failure is logged and the
checkpoint goes out with the cosignatures that did come back. On 409 the witness says which size
it cosigned last; the submission is retried once with a proof from that size (tlog-witness,
"add-checkpoint").
"""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence

from ledger.tlog.note import NoteSignature
from ledger.tlog.witness import WitnessRefusal, format_request, parse_response

TIMEOUT = 10.0
MAX_ANSWER = 1 << 16

log = logging.getLogger(__name__)

ProofFor = Callable[[int], list[bytes]]


def collect_cosignatures(
    witnesses: Sequence[str], note: bytes, old_size: int, new_size: int, proof_for: ProofFor
) -> list[NoteSignature]:
    """Cosignature lines from every witness (base URLs) that cosigned `note` at `new_size`.

    `old_size` is the size the log believes each witness cosigned last; `proof_for(size)` gives
    the consistency proof from `size` to `new_size` ([] for 0 or `new_size`).
    """
    collected = []
    for base in witnesses:
        try:
            collected += _submit(
                base.rstrip("/") + "/add-checkpoint", note, old_size, new_size, proof_for
            )
        except _Refused as refused:
            log.warning("witness %s did not cosign size %d: %s", base, new_size, refused)
    return collected


class _Refused(Exception):
    """A witness did not cosign (down, refused, or answered nonsense)."""


def _submit(url: str, note: bytes, old: int, new: int, proof_for: ProofFor) -> list[NoteSignature]:
    status, body = _post(url, format_request(old, proof_for(old), note))
    if status == 409:
        text = body.decode("ascii", "replace").strip()
        if not text.isdigit() or int(text) > new:
            raise _Refused(f"409 with latest size {text[:30]!r}, ahead of this log or not a size")
        status, body = _post(url, format_request(int(text), proof_for(int(text)), note))
    if status != 200:
        raise _Refused(f"HTTP {status}: {body[:200].decode('utf-8', 'replace').strip()}")
    try:
        return parse_response(body)
    except WitnessRefusal as exc:
        raise _Refused(str(exc)) from None


def _post(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "text/plain; charset=utf-8")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return answer.status, answer.read(MAX_ANSWER)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(MAX_ANSWER)
    except (urllib.error.URLError, OSError) as exc:
        raise _Refused(str(exc)) from None
