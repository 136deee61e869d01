"""The project's spider classes by name, outside a crawl: `crovia history` and `crovia absent`
read a kept body again with the code of the spider that received it (FeedSpider.read_again)."""

from __future__ import annotations

import functools

from crovia_spider.spiders.base import FeedSpider
from crovia_spider.spiders.spiderloader import FeedsSpiderLoader


def project_spider(name: str) -> type[FeedSpider] | None:
    """The FeedSpider class `scrapy crawl NAME` would run in this project (its settings module:
    SPIDER_MODULES, then feeds.toml), or None when the project has no such spider now: its
    records are then read with the base's reading, which every config-made spider has."""
    try:
        found = _project_loader().load(name)
    except KeyError:
        return None
    return found if isinstance(found, type) and issubclass(found, FeedSpider) else None


@functools.cache
def _project_loader() -> FeedsSpiderLoader:
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    if not settings.getlist("SPIDER_MODULES"):  # run outside the project: its own settings
        settings.setmodule("crovia_spider.settings", priority="project")
    return FeedsSpiderLoader(settings)
