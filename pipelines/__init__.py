"""Item pipeline stages, one per module, ordered in crovia_spider/settings.py.

Data flow: docs/design.md, step 3; what each stage does: docs/spider.md.
"""
