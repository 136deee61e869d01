"""The names of the spiders a project's code defines, as Scrapy's loader finds them. Apart from
the loader, so that the base spider can ask for them without importing what imports it."""

from __future__ import annotations

import functools

from scrapy.utils.misc import walk_modules_iter
from scrapy.utils.spider import iter_spider_classes


@functools.cache
def code_spider_names(modules: tuple[str, ...] | None = None) -> frozenset[str]:
    """The names of the spider classes in `modules` (default: the project's SPIDER_MODULES), as
    Scrapy's loader finds them. Raises ImportError when a module cannot be imported."""
    if modules is None:
        from crovia_spider.settings import SPIDER_MODULES

        modules = tuple(SPIDER_MODULES)
    return frozenset(
        spider.name
        for name in modules
        for module in walk_modules_iter(name)
        for spider in iter_spider_classes(module)
    )
