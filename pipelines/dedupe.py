"""Stage 3, dedupe: each item against every earlier version of its identity, in the ledger or run.

The identity is the item's `object.identity` (family, guid, link: pipelines/fingerprint.py), so
only envelopes of the same source family are ever compared or linked.
- Some earlier envelope of the identity has the same fingerprint: unchanged, dropped as a
  duplicate. Not only the newest: content that flaps A -> B -> A issues A and B once each and
  then nothing, ever (A seen again after B is no revision: it was observed already, and its
  envelope says when). The same item twice in one run (duplicate guids) thus issues once.
- Envelopes exist, none with this fingerprint: the content changed (new arXiv version, edited
  post); the item goes on as `updated` with `predecessors = [the newest envelope's axiom_id]`.
- No envelope: `new`.

Earlier versions include what this run issued or built already (held by the ledger session until
its batch is written): two versions of one arXiv paper in one run issue two envelopes, the later
linked to the earlier. Sightings of one identity are decided one at a time, each after the one
before it has left the pipelines (issued, or dropped), so the later always sees the earlier's.
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
from pipelines.stage import Stage, short


class DedupePipeline(Stage):
    """Sets `item.change` ("new" or "updated") and `item.predecessors`; drops duplicates."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.session = LedgerSession.of(crawler)
        # identity digest -> fired when its latest sighting so far has left the pipelines
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
        known = await self.session.known(item.identity_key, item.record["fingerprint"])
        if known.same is not None:
            raise self._duplicate(item, "unchanged since " + known.same.axiom_id)
        item.change = "new" if known.newest is None else "updated"
        item.predecessors = [] if known.newest is None else [known.newest.axiom_id]
        self.crawler.stats.inc_value(f"crovia/dedupe/{item.change}")
        return item

    def item_left(self, item: Any, **_: Any) -> None:
        """An item is out of the pipelines (signal): the next sighting of its identity may go on."""
        identity, done = self.in_flight.pop(id(item), ("", None))
        if done is None:
            return  # never reached this stage
        if self.last_sighting.get(identity) is done:
            del self.last_sighting[identity]
        done.callback(None)

    def _enter(self, item: FeedEntryItem) -> Deferred[None] | None:
        """Queue `item` behind the sightings of its identity; return the one to wait for, if any."""
        done: Deferred[None] = Deferred()
        self.in_flight[id(item)] = (item.identity_key, done)
        earlier = self.last_sighting.get(item.identity_key)
        self.last_sighting[item.identity_key] = done
        return earlier

    def _duplicate(self, item: FeedEntryItem, why: str) -> DropItem:
        self.run.count(item.vendor, "duplicate")
        self.crawler.stats.inc_value("crovia/dedupe/duplicate")
        message = f"{item.vendor}: duplicate ({why}): {short(item.target_id)}"
        return DropItem(message, log_level="DEBUG")
