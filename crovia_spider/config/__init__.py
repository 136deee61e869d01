"""The configuration room: what the project's TOML files say, read and checked before anything
starts. `tables` reads a TOML file within its bounds (size, nesting) and holds its top-level
tables to the expected ones; `feeds` is config/feeds.toml (one FeedConfig a source); `ruleset`
is config/classify.toml; `spider_modules` names the spiders the project's modules define
without importing Scrapy; `trust_roots` writes the trust root files front ends hand out. It
imports only the package root (options, exceptions, suggest, settings): every other room may
import it.
"""
