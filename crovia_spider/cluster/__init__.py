"""Crawling past one machine (docs/cluster.md): many crawl workers and one sequencer, on Redis.

`keys` names every Redis key and stream the cluster uses; `connection` opens redis-py clients;
`jobs` encodes a fetch job and checks a worker's result (hostile input: every field typed, every
body against its digest and cap); `politeness` is the per-host slot all workers share; `worker`
and `sequencer` are the two daemons (`crovia worker`, `crovia sequencer`), each running today's
`scrapy crawl` as its child for the work it takes. Imports the root, `config/`, `runs/`, `feed/`
and `schedule/`; the spiders' side of a remote crawl is `crovia_spider/spiders/remote.py`.
"""
