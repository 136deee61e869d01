"""Stage 3, dedupe: each item against its identity's newest envelope, in the ledger or this run.

- The newest envelope for the target_id has the same fingerprint: a duplicate, dropped. The same
  item twice in one run (duplicate guids, one post in two feeds) thus issues once.
- It has another fingerprint: the content changed (new arXiv version, edited post); the item goes on
  as `updated` with `predecessors = [that envelope's axiom_id]`.
- No envelope: `new`.

"Newest" includes what this run issued or built already (held by the ledger session until its batch
is written): two versions of one arXiv paper in one run issue two envelopes, the later linked to the
earlier. Sightings of one target are decided one at a time, each after the one before it has left
the pipelines (issued, or dropped), so the later always sees the earlier's envelope.
Duplicates are counted per feed in the run record and as `crovia/dedupe/duplicate` in the stats.
"""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from crovia_spider.items import FeedEntryItem
from pipelines.ledger_session import LedgerSession
from pipelines.stage import Stage


class DedupePipeline(Stage):
    """Sets `item.change` ("new" or "updated") and `item.predecessors`; drops duplicates."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.session = LedgerSession.of(crawler)
        # target_id -> fired when its latest sighting so far has left the pipelines
        self.last_sighting: dict[str, Deferred[None]] = {}
        self.in_flight: dict[int, tuple[str, Deferred[None]]] = {}  # id(item) -> its own

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupePipeline:
        stage = cls(crawler)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(stage.item_left, signal=signal)
        return stage

    async def process_item(self, item: FeedEntryItem) -> FeedEntryItem:
        earlier = self._enter(item)
        if earlier is not None:
            await maybe_deferred_to_future(earlier)
        latest = await self.session.latest_for_target(item.target_id)
        if latest is not None and latest.fingerprint == item.record["fingerprint"]:
            raise self._duplicate(item, "unchanged since " + latest.axiom_id)
        item.change = "new" if latest is None else "updated"
        item.predecessors = [] if latest is None else [latest.axiom_id]
        self.crawler.stats.inc_value(f"crovia/dedupe/{item.change}")
        return item

    def item_left(self, item: Any, **_: Any) -> None:
        """An item is out of the pipelines (signal): the next sighting of its target may go on."""
        target_id, done = self.in_flight.pop(id(item), ("", None))
        if done is None:
            return  # never reached this stage
        if self.last_sighting.get(target_id) is done:
            del self.last_sighting[target_id]
        done.callback(None)

    def _enter(self, item: FeedEntryItem) -> Deferred[None] | None:
        """Queue `item` behind the sightings of its target; return the one to wait for, if any."""
        done: Deferred[None] = Deferred()
        self.in_flight[id(item)] = (item.target_id, done)
        earlier = self.last_sighting.get(item.target_id)
        self.last_sighting[item.target_id] = done
        return earlier

    def _duplicate(self, item: FeedEntryItem, why: str) -> DropItem:
        self.run.count(item.vendor, "duplicate")
        self.crawler.stats.inc_value("crovia/dedupe/duplicate")
        return DropItem(f"duplicate ({why}): {item.target_id}", log_level="DEBUG")
