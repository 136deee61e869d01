"""The whole-ledger audit (`crovia audit`): every line, signature, index row, kept body, seal,
key rotation and checkpoint, checked in one pass.

`audit` runs it; `leaves`, `seals`, `keys`, `index` and `tlog_audit` each own one family of
checks; `processes` spreads large ledgers over worker processes. `bodies`
(`crovia audit --bodies`) then holds every fetch record to its kept body, read again with a
reader the caller passes. May import the format root, `ledger.tlog`, `ledger.keys`,
`ledger.stamps`, `ledger.receipt` and `ledger.store`; never publish or monitor. Exports what the
rest of the project uses.
"""

from __future__ import annotations

from ledger.audit.bodies import BodiesReport, check_fetch_bodies
from ledger.audit.seals import parse_seals
from ledger.audit.whole import AuditReport, audit

__all__ = ["AuditReport", "BodiesReport", "audit", "check_fetch_bodies", "parse_seals"]
