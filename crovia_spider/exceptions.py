"""Errors of the Scrapy side and the CLI (the ledger has its own root, LedgerError).

Every reason a crawl is refused before it fetches anything lives here, so the spider, the log
filters and the pipelines share one definition.
"""


class CroviaError(Exception):
    """Root of crovia-spider's own errors outside `ledger/`."""


class ConfigError(CroviaError):
    """A config file or setting is invalid; the message names the file, the entry and the fault."""


class CrawlRefused(CroviaError):
    """The crawl must not start: no signing key, a key other than the ledger's, or another
    writer holds the ledger lock."""


class OutputExists(CroviaError):
    """A command would write over an existing file and was not given --force."""


class ExportRefused(CroviaError):
    """`crovia export` writes nothing: no capture record matches, one cannot be rebuilt as a WARC
    record, or the archive tools refused what was built (crovia_spider/archive/)."""
