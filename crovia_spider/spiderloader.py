"""A spider loader that also makes a spider for every `spider = "NAME"` of config/feeds.toml.

So a new source family needs no code: a `[[feeds]]` entry with a new spider name is enough, and
`scrapy list` shows it. Spider modules (SPIDER_MODULES) still come first: a class named like a
config spider wins, which is how a spider needing its own parsing overrides the generated one.
"""

from __future__ import annotations

import logging
from pathlib import Path

from scrapy.settings import BaseSettings
from scrapy.spiderloader import SpiderLoader

from crovia_spider.exceptions import ConfigError
from crovia_spider.feeds_config import load_feeds
from crovia_spider.options import resolve_path
from crovia_spider.spiders.base import FeedSpider

logger = logging.getLogger(__name__)


class FeedsSpiderLoader(SpiderLoader):
    """Scrapy's loader plus one FeedSpider subclass per spider name found only in feeds.toml."""

    def __init__(self, settings: BaseSettings) -> None:
        super().__init__(settings)
        for name in self._config_spider_names(resolve_path(settings["CROVIA_FEEDS_FILE"])):
            if name not in self._spiders:
                self._spiders[name] = type(
                    f"{name.title().replace('_', '')}Spider",
                    (FeedSpider,),
                    {"name": name, "__module__": __name__},
                )

    @staticmethod
    def _config_spider_names(path: Path) -> list[str]:
        # A broken feed list must not break `scrapy list`; the crawl itself reports the error.
        if not path.exists():
            return []
        try:
            return sorted({feed.spider for feed in load_feeds(path)})
        except ConfigError as exc:
            logger.warning("%s", exc)
            return []
