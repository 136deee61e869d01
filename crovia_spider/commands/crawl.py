"""`scrapy crawl`, exiting non-zero whenever the ledger may not hold what the crawl saw.

Exit status 1 when the crawl was refused before fetching (Scrapy's own check: the crawler never
started), when the ledger refused a batch or the final seal (the issue stage marks its stats), or
when the crawl was force-stopped (a second Ctrl-C stops the reactor before the issue stage could
write the run record, so its stats lack the mark it sets then). A crawl where feeds failed but the
ledger is sound exits 0, and so does one stopped by a single Ctrl-C: it closed cleanly.

With CROVIA_METRICS_FILE set, every crawl ends by writing the ledger's metrics there
(crovia_spider/runs/metrics.py) for node-exporter's textfile collector; a failure to write it is
logged and leaves the exit status alone (the ledger holds what the crawl saw).
"""

from __future__ import annotations

import argparse
import logging

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError

from crovia_spider.options import resolve_path
from crovia_spider.runs.runlog import LEDGER_FAILED, RUN_RECORDED

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
        if crawler.settings.get("CROVIA_REDIS_ROLE") == "worker":
            # A cluster's worker keeps no ledger, no run record and no metrics file: a job it
            # did not finish stays pending in Redis for another (crovia_spider/cluster/worker.py).
            self.exitcode = 1 if self.crawler_process.bootstrap_failed else 0
            return
        write_metrics_file(crawler.settings)
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif crawler.stats.get_value(LEDGER_FAILED):
            logger.error("exit status 1: the ledger refused a batch or the seal (see run record)")
            self.exitcode = 1
        elif not crawler.stats.get_value(RUN_RECORDED):
            logger.error("exit status 1: the crawl was stopped before its run record was written")
            self.exitcode = 1


def write_metrics_file(settings: object) -> None:
    """Write the metrics to CROVIA_METRICS_FILE (setting or environment) when it is set."""
    target = settings.get("CROVIA_METRICS_FILE") or ""  # type: ignore[attr-defined]
    if not target:
        return
    from crovia_spider.runs.metrics import write_textfile

    publish = settings.get("CROVIA_PUBLISH_DIR") or ""  # type: ignore[attr-defined]
    try:
        write_textfile(
            resolve_path(target),
            resolve_path(settings["CROVIA_LEDGER_DIR"]),  # type: ignore[index]
            resolve_path(publish) if publish else None,
        )
    except OSError as exc:
        logger.error("could not write the metrics file %s: %s", target, exc)
