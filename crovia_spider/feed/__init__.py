"""Reading a fetched body: one reader per source kind behind `kinds` (feedparser for RSS and Atom
in `body`, after the prolog checks of `prolog`; `jsonfeed`; `sitemap`; `listing` for an HTML page),
run in a worker process under ceilings (`parsepool`, `ceilings`), one item per entry (`entries`,
arXiv ids in `arxiv`, plain text in `plaintext`). Step 2 of docs/design.md; no hashing, dedupe or
classification here.
"""
