"""`scrapy crawl`, exiting non-zero whenever the ledger may not hold what the crawl saw.

Exit status 1 when the crawl was refused before fetching (Scrapy's own check: the crawler never
started), when the ledger refused a batch or the final seal (the issue stage marks its stats), or
when the crawl was force-stopped (a second Ctrl-C stops the reactor before the issue stage could
write the run record, so its stats lack the mark it sets then). A crawl where feeds failed but the
ledger is sound exits 0, and so does one stopped by a single Ctrl-C: it closed cleanly.
"""

from __future__ import annotations

import argparse
import logging

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError

from crovia_spider.runlog import LEDGER_FAILED, RUN_RECORDED

logger = logging.getLogger(__name__)


class Command(ScrapyCrawl):
    """Scrapy's crawl command, with the exit status of the module docstring."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one spider: scrapy crawl NAME")
        assert self.crawler_process
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif crawler.stats.get_value(LEDGER_FAILED):
            logger.error("exit status 1: the ledger refused a batch or the seal (see run record)")
            self.exitcode = 1
        elif not crawler.stats.get_value(RUN_RECORDED):
            logger.error("exit status 1: the crawl was stopped before its run record was written")
            self.exitcode = 1
