"""Errors of the Scrapy side and the CLI (the ledger has its own root, LedgerError)."""


class CroviaError(Exception):
    """Root of crovia-spider's own errors outside `ledger/`."""


class ConfigError(CroviaError):
    """A config file or setting is invalid; the message names the file, the entry and the fault."""
