"""The Scrapy project of crovia-spider: spiders, items, settings, middlewares and the `crovia` CLI.

Data flow: see docs/design.md (spider -> pipelines -> ledger -> verifier). This package must stay
cheap to import: the `crovia` CLI imports it for every subcommand, so Scrapy is imported lazily.
"""

__version__ = "0.1.0"
