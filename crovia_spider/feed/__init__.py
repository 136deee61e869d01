"""Reading a fetched feed: the body's prolog checks (`prolog`), feedparser (`body`, in a worker
process: `parsepool`), one item per entry (`entries`, arXiv ids in `arxiv`, plain text in
`plaintext`). Step 2 of docs/design.md; no hashing, dedupe or classification here.
"""
