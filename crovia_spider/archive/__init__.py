"""Exporting captures as web archives: `crovia export` (docs/archives.md). Beside step 5 of
docs/design.md's flow (a receipt): once the ledger has signed and sealed capture records
(AX.CAPTURE), an export packs the pages they name with the receipts that vouch for them.

`select` finds the capture records to export (of items, of a vendor, or named); `heads` rebuilds
the HTTP heads a WARC record holds from the kept head blobs; `warc` writes WARC 1.1 through warcio
(a request and a response record per capture with a response, a metadata record per capture
without one); `pages` names each captured page and its title; `wacz` packages that WARC with the
`wacz` tool and adds each capture record's receipt and tlog proof. Reading the kept blobs goes
through `ledger.store.BodyStore`, which refuses bytes that are not the signed ones, so an export
holds nothing the ledger does not vouch for. Imports the ledger and the package root, no other
room; only `cli/` imports it. Export is kept apart from capture (fetching and recording a page)
and from comparison (main text, diff): it works on kept blobs alone.
"""
