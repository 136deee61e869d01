"""Crawls deliver: after a crawl (engine_stopped: its ledger sealed and its run recorded), the
change events it made are enqueued and what is due is delivered, within BUDGET seconds
(crovia_spider/notify/run.py). The notify config is read when the crawl is built: a bad one
refuses the crawl ("crawl refused", as a bad classify.toml does), before anything is fetched. A
crawl without a notify config, or whose config names no target, does nothing; a cluster worker
(it signs nothing) neither. A delivery that fails is logged and left in the outbox for the next
crawl or `crovia notify`: the crawl's exit status is its own.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import signals

logger = logging.getLogger(__name__)
BUDGET = 60.0  # seconds of delivery after a crawl; the rest waits for the next run


class NotifyAfterCrawl:
    def __init__(self, crawler: Any, config: Any) -> None:
        self.crawler = crawler
        self.config = config

    @classmethod
    def from_crawler(cls, crawler: Any) -> NotifyAfterCrawl:
        """Read the notify config before the crawl starts: a bad one refuses the crawl, as a bad
        feeds.toml does (one line, "crawl refused"), rather than being found after it."""
        from crovia_spider.exceptions import ConfigError
        from crovia_spider.notify.config import NotifyConfig, load_notify
        from crovia_spider.options import env_default, resolve_path

        settings = crawler.settings
        config = NotifyConfig()
        if settings.get("CROVIA_REDIS_ROLE") != "worker":
            try:
                config = load_notify(
                    resolve_path(
                        settings.get("CROVIA_NOTIFY_FILE") or env_default("CROVIA_NOTIFY_FILE")
                    )
                )
            except ConfigError as exc:
                logging.getLogger(crawler.spidercls.name).critical("crawl refused: %s", exc)
                raise
        extension = cls(crawler, config)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def engine_stopped(self) -> None:
        settings = self.crawler.settings
        config = self.config
        if not config.targets:
            return
        from crovia_spider.exceptions import ConfigError
        from crovia_spider.notify.run import notify_once, settings_from_env
        from crovia_spider.options import resolve_path
        from ledger.exceptions import LedgerError

        names = (
            "CROVIA_NOTIFY_KEY_FILE", "CROVIA_REMOVAL_CAPTURES", "CROVIA_REMOVAL_SPAN",
            "CROVIA_CHANGES_PER_PAGE", "CROVIA_NOTIFY_RETRIES", "CROVIA_NOTIFY_TIMEOUT",
        )  # fmt: skip
        try:
            run = settings_from_env({name: settings.get(name) for name in names})
            run.budget = BUDGET
            ledger_dir = resolve_path(settings["CROVIA_LEDGER_DIR"])
            if not (ledger_dir / "axiom_ledger.jsonl").is_file():
                return
            report = notify_once(ledger_dir, config, run)
        except (ConfigError, LedgerError, OSError, ValueError) as exc:
            logger.error("notifications not delivered: %s (crovia notify status)", exc)
            return
        if report.skipped:
            logger.info("notifications: %s", report.skipped)
            return
        logger.info(
            "notifications: %d new, %d delivered, %d failed (retried later), %d given up,"
            " %d waiting%s",
            report.enqueued,
            report.delivered,
            report.failed,
            report.gave_up,
            report.waiting,
            f"; disabled by a 410: {', '.join(report.disabled)}" if report.disabled else "",
        )
