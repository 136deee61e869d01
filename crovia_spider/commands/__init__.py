"""Scrapy commands of this project (COMMANDS_MODULE): `crawl` with an honest exit status."""
