"""The runs room: what a crawl leaves behind besides the ledger and how it stops. `runlog` writes
the run records (runs.jsonl); `runsummary` the closing summary; `feed_state` each feed's last
outcome and failures in a row; `metrics` the Prometheus textfile; `logfilters` and
`logformatter` keep Scrapy's log quiet and safe; `stopping` turns one Ctrl-C into "no new
fetches". It imports only the package root, so spiders, commands and front ends may all use it.
"""
