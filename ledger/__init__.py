"""The ledger: envelopes, append-only JSONL storage, Merkle seals, receipts, offline verifier.

Knows nothing of Scrapy, HTTP or feeds. Data flow: docs/design.md, steps 5-7.
"""
