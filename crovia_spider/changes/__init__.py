"""Change events told to the world: the published feeds of changes and their pages.

`published` writes, for `crovia publish`, `changes.atom` (Atom 1.0) and `changes.json` (JSON Feed
1.1) of the newest change events (ledger/changes/), and one page per edit (`changes/<id>.html`)
showing the two kept texts side by side, as text. Everything from a vendor's page is escaped by
the writer that emits it (ElementTree for Atom, json for JSON Feed, html.escape and difflib for
the pages): no markup from a page is ever emitted as markup. Imports the format root and the
ledger's rooms, `crovia_spider.options` and nothing else of the crawler (docs/watching.md).
"""
