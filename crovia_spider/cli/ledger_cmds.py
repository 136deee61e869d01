"""Ledger subcommands of `crovia`: verify, prove, seal, audit, stats, reindex.

Two groups: receipts (ledger_proof_cmds.py: verify, prove) and the ledger directory
(ledger_admin_cmds.py: seal, audit, stats, reindex); ledger_args.py holds what they share. Keys
have their own module (key_cmds.py). All import only the stdlib at module level; the ledger
(PyNaCl, orjson) is imported inside handlers so that `crovia --help` stays fast. Failed checks
raise VerificationError (exit 1), usage and I/O problems LedgerError (exit 2); the dispatcher in
crovia_spider/cli/__init__.py turns them into messages. See docs/ledger.md.
"""

from __future__ import annotations

import argparse

from crovia_spider.cli import ledger_admin_cmds, ledger_proof_cmds


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's subcommands, in the order `crovia --help` lists them."""
    ledger_proof_cmds.register(subparsers)
    ledger_admin_cmds.register(subparsers)
