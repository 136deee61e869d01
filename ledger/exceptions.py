"""Errors of the ledger package. Every one derives from LedgerError."""


class LedgerError(Exception):
    """Root of all ledger errors."""


class VerificationError(LedgerError):
    """A check of a receipt, envelope, seal or ledger line failed (exit code 1 in the CLI)."""
