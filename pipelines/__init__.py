"""Item pipeline stages, one per module, ordered in crovia_spider/settings.py. Data flow: docs/design.md."""
