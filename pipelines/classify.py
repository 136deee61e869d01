"""Stage 4, classify: rule-based, deterministic; the rules are data in config/classify.toml.

Sets `decision_hint` (also the envelope's `decision`), `category` (and with it `axiom_subtype` and
`schema`), `envelope_target` ("AX.OBS"), and `item.ruleset` = {"version", "sha256"} of the rules
file, signed into the envelope's `confidence.ruleset` so a classification can be reproduced later.
The rules themselves are loaded and matched by crovia_spider/config/ruleset.py.
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler

from crovia_spider.config.ruleset import DECISION_HINTS, Rule, Ruleset, load_ruleset
from crovia_spider.exceptions import ConfigError
from crovia_spider.items import FeedEntryItem
from crovia_spider.options import resolve_path
from pipelines.normalize import ENVELOPE_TARGET, subtype_fields
from pipelines.stage import Stage

__all__ = ["DECISION_HINTS", "ClassifyPipeline", "Rule", "Ruleset", "load_ruleset"]
logger = logging.getLogger(__name__)


class ClassifyPipeline(Stage):
    """Applies the ruleset of CROVIA_CLASSIFY_FILE (ConfigError when the crawl is built)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        # Validated when the crawl is built, before the ledger is opened and any request is sent.
        try:
            self.ruleset = load_ruleset(resolve_path(crawler.settings["CROVIA_CLASSIFY_FILE"]))
        except ConfigError as exc:
            logger.critical("crawl refused: %s", exc)
            raise

    def process_entry(self, item: FeedEntryItem) -> FeedEntryItem:
        record = item.record
        facts = {
            "vendor": item.vendor,
            "announce_type": (item.arxiv or {}).get("announce_type", ""),
            "change": item.change,
            "text": f"{record['title']}\n{record['summary_excerpt']}",
        }
        outcome = self.ruleset.classify(facts)
        record["decision_hint"] = outcome["decision_hint"]
        record["category"] = outcome.get("category", record["category"])
        record["envelope_target"] = ENVELOPE_TARGET
        record.update(subtype_fields(record["category"], record["spider"]))
        item.ruleset = {"version": self.ruleset.version, "sha256": self.ruleset.sha256}
        return item
