"""The fetching room: how this harvester may touch the network. `addresses` says which hosts are
public; `fetchpolicy` holds every request and redirect hop to the fetch policy (scheme, host,
port, size caps); `politeness` spaces requests to one host and reads robots rules; `middlewares`
are the Scrapy downloader middlewares that apply both; `stamp_http` is the careful HTTP client of
`crovia stamp`. It imports the root, the configuration room and the feed room's pure helpers.
"""
