"""Scrapy commands of this project (COMMANDS_MODULE): `crawl` with an honest exit status. It
replaces Scrapy's own `crawl` so that `scrapy crawl` exits 1 when the crawl was refused before
fetching, when the ledger refused a batch or when it was forced to stop; it imports the runs room
(run records, metrics) and the package root only.
"""
