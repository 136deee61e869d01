"""Errors of the pipeline stages. Every one derives from PipelineError (a CroviaError)."""

from crovia_spider.exceptions import CroviaError


class PipelineError(CroviaError):
    """Root of the pipelines' own errors."""


class CrawlRefused(PipelineError):
    """The crawl must not start: no signing key, or another writer holds the ledger lock."""
