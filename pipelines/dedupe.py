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
before it has left the pipelines (issued, or dropped), so the later always sees the earlier's: a
batch (crovia_spider/items.py, which never holds an identity twice) waits for the batches holding
earlier sightings of any of its identities, then asks the ledger about all its entries in one job.
Duplicates are counted per feed in the run record and as `crovia/dedupe/duplicate` in the stats.
"""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from crovia_spider.items import FeedBatch, FeedEntryItem
from pipelines.ledger_session import LedgerSession
from pipelines.stage import Stage, short


class DedupePipeline(Stage):
    """Sets `item.change` ("new" or "updated") and `item.predecessors`; drops duplicates."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.session = LedgerSession.of(crawler)
        # identity digest -> fired when its latest sighting so far has left the pipelines
        self.last_sighting: dict[str, Deferred[None]] = {}
        # id(item) -> the identities of its entries, and its own Deferred
        self.in_flight: dict[int, tuple[list[str], Deferred[None]]] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupePipeline:
        stage = cls(crawler)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(stage.item_left, signal=signal)
        return stage

    async def process_item(self, item: FeedBatch | FeedEntryItem) -> FeedBatch | FeedEntryItem:
        """Decide a batch's entries (no identity twice in one: crovia_spider/items.py) with one
        lookup, after every earlier sighting of theirs has left the pipelines; or one entry."""
        batch = type(item) is FeedBatch
        entries = item.entries if batch else [item]
        if not entries:  # every entry was dropped before this stage
            return item
        for earlier in self._enter(item, entries):
            await maybe_deferred_to_future(earlier)
        asked = [(entry.identity_key, entry.record["fingerprint"]) for entry in entries]
        kept = []
        for entry, known in zip(entries, await self.session.known_many(asked), strict=True):
            if known.same is not None:
                drop = self._duplicate(entry, "unchanged since " + known.same.axiom_id)
                if not batch:
                    raise drop
                self.dropped(entry, drop)
                continue
            entry.change = "new" if known.newest is None else "updated"
            entry.predecessors = [] if known.newest is None else [known.newest.axiom_id]
            self.crawler.stats.inc_value(f"crovia/dedupe/{entry.change}")
            kept.append(entry)
        if batch:
            item.entries = kept
        return item

    def item_left(self, item: Any, **_: Any) -> None:
        """An item is out of the pipelines (signal): the next sightings of its identities may
        go on."""
        identities, done = self.in_flight.pop(id(item), ((), None))
        if done is None:
            return  # never reached this stage
        for identity in identities:
            if self.last_sighting.get(identity) is done:
                del self.last_sighting[identity]
        done.callback(None)

    def _enter(self, item: Any, entries: list[FeedEntryItem]) -> list[Deferred[None]]:
        """Queue `item` behind the sightings of its entries' identities; return the ones to wait
        for (each once)."""
        done: Deferred[None] = Deferred()
        keys = [entry.identity_key for entry in entries]
        if len(set(keys)) < len(keys):  # would wait for itself: a crawl that never ends
            raise ValueError(
                "a batch holds one identity twice (make batches with"
                " crovia_spider.spiders.batching.batches)"
            )
        self.in_flight[id(item)] = (keys, done)
        earlier: dict[int, Deferred[None]] = {}
        for key in keys:
            before = self.last_sighting.get(key)
            if before is not None:
                earlier[id(before)] = before
            self.last_sighting[key] = done
        return list(earlier.values())

    def _duplicate(self, item: FeedEntryItem, why: str) -> DropItem:
        self.run.count(item.vendor, "duplicate")
        self.crawler.stats.inc_value("crovia/dedupe/duplicate")
        message = f"{item.vendor}: duplicate ({why}): {short(item.target_id)}"
        return DropItem(message, log_level="DEBUG")
