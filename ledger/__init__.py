"""The ledger: envelopes, append-only JSONL storage, Merkle seals, receipts, offline verifier.

Knows nothing of Scrapy, HTTP or feeds. Data flow: docs/design.md, steps 4-6; formats, storage,
recovery and the CLI: docs/ledger.md.
"""
