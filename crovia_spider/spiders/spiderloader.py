"""A spider loader that also makes a spider for every `spider = "NAME"` of config/feeds.toml.

So a new source family needs no code: a `[[feeds]]` entry with a new spider name, declared with
`new_spider = true`, is enough, and `scrapy list` shows it. Spider modules (SPIDER_MODULES) still
come first: a class named like a config spider wins, which is how a spider needing its own parsing
overrides the generated one.
"""

from __future__ import annotations

import logging
from pathlib import Path

import scrapy
from scrapy.exceptions import UsageError
from scrapy.settings import BaseSettings
from scrapy.spiderloader import SpiderLoader

from crovia_spider.cluster.jobs import SPIDER_NAME
from crovia_spider.config.feeds import load_feeds
from crovia_spider.exceptions import ConfigError
from crovia_spider.options import resolve_path
from crovia_spider.spiders.base import FeedSpider
from crovia_spider.spiders.names import code_spider_names  # noqa: F401 (the loader's own)
from crovia_spider.suggest import did_you_mean

logger = logging.getLogger(__name__)


class UnknownSpider(UsageError, KeyError):
    """No spider of that name. A UsageError, so `scrapy crawl NAME` prints one line and exits 2
    instead of a traceback; a KeyError, as Scrapy's loader interface promises."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(
            f"unknown spider {name!r}; spiders of this project: {', '.join(known) or 'none'}"
            f" (`scrapy list`){did_you_mean(name, known)}",
            print_help=False,
        )

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class FeedsSpiderLoader(SpiderLoader):
    """Scrapy's loader plus one FeedSpider subclass per spider name found only in feeds.toml."""

    def __init__(self, settings: BaseSettings) -> None:
        super().__init__(settings)
        # A cluster's worker reads no feeds.toml: a spider its jobs name that its code lacks is
        # one the sequencer's config made (crovia_spider/spiders/remote.py), made here the same.
        self.any_name = settings.get("CROVIA_REDIS_ROLE") == "worker"
        path = resolve_path(settings["CROVIA_FEEDS_FILE"])
        for name in self._config_spider_names(path, list(self._spiders)):
            if name not in self._spiders:
                self._spiders[name] = config_spider(name)

    def load(self, spider_name: str) -> type[scrapy.Spider]:
        """The spider class named `spider_name`. Raises UnknownSpider listing every spider."""
        try:
            return super().load(spider_name)
        except KeyError:
            if self.any_name and SPIDER_NAME.fullmatch(spider_name):
                return config_spider(spider_name)
            raise UnknownSpider(spider_name, sorted(self.list())) from None

    @staticmethod
    def _config_spider_names(path: Path, code: list[str]) -> list[str]:
        # A broken feed list must not break `scrapy list`; the crawl itself reports the error.
        if not path.exists():
            return []
        try:
            return sorted({feed.spider for feed in load_feeds(path, spiders=code)})
        except ConfigError as exc:
            logger.warning("%s", exc)
            return []


def config_spider(name: str) -> type[FeedSpider]:
    """The spider of a name found only in feeds.toml: FeedSpider's reading, named `name`."""
    return type(
        f"{name.title().replace('_', '')}Spider",
        (FeedSpider,),
        {"name": name, "__module__": __name__},
    )
