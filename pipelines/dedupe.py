"""Stage 3, dedupe: across runs against the ledger index, and within the run.

- Same target_id already issued this run: a duplicate (the first sighting wins), dropped.
- The ledger's newest leaf for the target_id has the same fingerprint: a duplicate, dropped.
- It has another fingerprint: the content changed (new arXiv version, edited post); the item goes on
  as `updated` with `predecessors = [that leaf's axiom_id]`.
- No leaf: `new`.
Duplicates are counted per feed in the run record and as `crovia/dedupe/duplicate` in the stats.
"""

from __future__ import annotations

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from crovia_spider.items import FeedEntryItem
from pipelines.ledger_session import LedgerSession
from pipelines.stage import Stage


class DedupePipeline(Stage):
    """Sets `item.change` ("new" or "updated") and `item.predecessors`; drops duplicates."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.session = LedgerSession.of(crawler)
        self.seen: set[str] = set()

    async def process_item(self, item: FeedEntryItem) -> FeedEntryItem:
        if item.target_id in self.seen:
            raise self._duplicate(item, "already seen in this run")
        self.seen.add(item.target_id)  # before the await: a second sighting must not slip past
        latest = await self.session.latest_for_target(item.target_id)
        if latest is not None and latest.fingerprint == item.record["fingerprint"]:
            raise self._duplicate(item, "unchanged since " + latest.axiom_id)
        item.change = "new" if latest is None else "updated"
        item.predecessors = [] if latest is None else [latest.axiom_id]
        self.crawler.stats.inc_value(f"crovia/dedupe/{item.change}")
        return item

    def _duplicate(self, item: FeedEntryItem, why: str) -> DropItem:
        self.run.count(item.vendor, "duplicate")
        self.crawler.stats.inc_value("crovia/dedupe/duplicate")
        return DropItem(f"duplicate ({why}): {item.target_id}", log_level="DEBUG")
