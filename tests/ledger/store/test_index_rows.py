"""The index row the audit compares with index.sqlite (`stored_row`, one step) is the row the
writer stores (`stored_values(row_for(...))`), for every envelope, whatever fields it lacks."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from ledger.envelope import sign_envelope
from ledger.store.index import row_for, stored_row, stored_values
from tests.vectors.make_vectors import sample_envelope

# Fields the row reads, as paths; any of them (or the object holding it) may be missing, and
# an identity may be missing (an envelope from before identities: the target id stands in).
PATHS = [
    ("axiom_id",),
    ("subject",),
    ("subject", "target_id"),
    ("body",),
    ("body", "fingerprint"),
    ("body", "receipt_hash"),
    ("body", "vendor"),
    ("body", "spider_record"),
    ("body", "spider_record", "parent_run_hash"),
    ("object",),
    ("object", "identity"),
]


@given(
    number=st.integers(0, 50),
    identity=st.none() | st.dictionaries(st.sampled_from(["family", "guid", "link"]), st.text()),
    dropped=st.lists(st.sampled_from(PATHS), max_size=4),
    leaf=st.integers(0, 2**40),
    offset=st.integers(0, 2**40),
    length=st.integers(1, 2**20),
)
def test_the_audits_row_is_the_writers_row(
    number: int,
    identity: dict[str, str] | None,
    dropped: list[tuple[str, ...]],
    leaf: int,
    offset: int,
    length: int,
) -> None:
    import nacl.signing

    key = nacl.signing.SigningKey(bytes(32))
    envelope = copy.deepcopy(sign_envelope(sample_envelope(number), [], key))
    if identity is not None:  # a crawled item's (the row's identity is its digest)
        envelope["object"] = {**envelope.get("object", {}), "identity": identity}
    for path in dropped:
        holder = envelope
        for name in path[:-1]:
            holder = holder.get(name) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            holder.pop(path[-1], None)
    writers = stored_values(row_for(envelope, leaf, offset, length))
    assert stored_row(envelope, leaf, offset, length) == writers
