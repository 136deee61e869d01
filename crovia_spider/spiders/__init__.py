"""The spiders room: Scrapy's SPIDER_MODULES. `base` is FeedSpider, the one reading every kind
of feed and signing one fetch record a feed and crawl; `vendor_press` the default spider;
`spiderloader` makes a spider of every config entry naming one that no module defines;
`fetches` builds fetch records and reads a kept body again as the crawl read it; `sitemap_walk`
fetches the sitemaps a sitemap source names, all of it one fetch record; `reread` and
`project_spiders` let `crovia history` and `crovia absent` read old bodies with the spider
their record names. It imports every lower room: config, feed, fetching, runs.
"""
