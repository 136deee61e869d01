"""The records the log signs, one module a kind, and their shapes: a room of the format.

`fetch` (AX.FETCH: what one fetch of a source gave), `capture` (AX.CAPTURE: one capture of an
item's page), `coverage` (AX.COVERAGE: arXiv's completeness per category and day) and `shape`
(every envelope's shape, by kind, as both verifiers hold it). It imports the format root only
(canonical, envelope, exceptions); the rooms above it (receipt, store, audit, publish,
changes, monitor) and the front ends import its modules, `ledger.records.fetch` and so on, as
they import `ledger.tlog` and `ledger.stamps`. docs/format.md says what each record holds.
"""
