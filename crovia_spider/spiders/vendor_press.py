"""`scrapy crawl vendor_press`: arXiv and AI-vendor feeds (the spider of the reference receipt)."""

from crovia_spider.spiders.base import FeedSpider


class VendorPressSpider(FeedSpider):
    """Every enabled feed of config/feeds.toml with `spider = "vendor_press"` (the default)."""

    name = "vendor_press"
