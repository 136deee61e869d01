"""Scrapy settings of crovia-spider: only what differs from Scrapy's defaults, each with its reason.

Project settings are `CROVIA_*` (crovia_spider/options.py lists them): `-s NAME=value` beats the
environment, which beats the default. Relative paths are taken from the project root (the folder
with scrapy.cfg), whichever directory the crawl starts in.
"""

import os

from crovia_spider.options import env_default, path_default, user_agent

BOT_NAME = "crovia_spider"
SPIDER_MODULES = ["crovia_spider.spiders"]
NEWSPIDER_MODULE = "crovia_spider.spiders"
# Also a spider for every `spider = "NAME"` in the feed list, so a new source family needs no code.
SPIDER_LOADER_CLASS = "crovia_spider.spiders.spiderloader.FeedsSpiderLoader"
# `scrapy genspider -t feed NAME URL` writes a FeedSpider subclass from this project's template.
TEMPLATES_DIR = os.path.join(os.path.dirname(__file__), "templates")

CROVIA_FEEDS_FILE = str(path_default("CROVIA_FEEDS_FILE"))
CROVIA_CLASSIFY_FILE = str(path_default("CROVIA_CLASSIFY_FILE"))
CROVIA_LEDGER_DIR = str(path_default("CROVIA_LEDGER_DIR"))
CROVIA_SIGNING_KEY_FILE = str(path_default("CROVIA_SIGNING_KEY_FILE"))
CROVIA_SEAL_EVERY = env_default("CROVIA_SEAL_EVERY")
CROVIA_LOCK_TIMEOUT = env_default("CROVIA_LOCK_TIMEOUT")
CROVIA_LOG_ORIGIN = env_default("CROVIA_LOG_ORIGIN")
# Envelopes handed to the ledger per issue() call: one fsync per batch.
CROVIA_ISSUE_BATCH = env_default("CROVIA_ISSUE_BATCH")
# 1: feedparser runs in a worker process, on the second core (crovia_spider/feed/parsepool.py).
CROVIA_PARSE_WORKER = env_default("CROVIA_PARSE_WORKER")
# The worker's ceilings for one body (crovia_spider/feed/ceilings.py): past either, a failed feed.
CROVIA_PARSE_MEMORY_MB = env_default("CROVIA_PARSE_MEMORY_MB")
CROVIA_PARSE_SECONDS = env_default("CROVIA_PARSE_SECONDS")
# 0 turns every politeness delay off (tests and benchmarks against 127.0.0.1 only).
CROVIA_POLITE_DELAYS = env_default("CROVIA_POLITE_DELAYS")
CROVIA_CONTACT_URL = env_default("CROVIA_CONTACT_URL")
# A feed failing this many crawls in a row is named in every crawl summary until it recovers.
CROVIA_FAILING_AFTER = env_default("CROVIA_FAILING_AFTER")
# Entries read per feed and crawl; the rest are counted as dropped (a feed of millions is no feed).
CROVIA_MAX_ENTRIES_PER_FEED = env_default("CROVIA_MAX_ENTRIES_PER_FEED")
CROVIA_MAX_SITEMAP_URLS = env_default("CROVIA_MAX_SITEMAP_URLS")
CROVIA_SITEMAP_FETCHES = env_default("CROVIA_SITEMAP_FETCHES")
CROVIA_SITEMAP_DEPTH = env_default("CROVIA_SITEMAP_DEPTH")
CROVIA_SITEMAP_BYTES = env_default("CROVIA_SITEMAP_BYTES")
# Captures of items' pages (docs/spider.md "Captures"): on/off, the recapture schedule, the cap.
CROVIA_CAPTURE = env_default("CROVIA_CAPTURE")
CROVIA_RECAPTURE_AFTER = env_default("CROVIA_RECAPTURE_AFTER")
CROVIA_CAPTURE_MAX_BYTES = env_default("CROVIA_CAPTURE_MAX_BYTES")
# At most this many plain captures a run; browser captures (`capture = "browser"`,
# docs/browser.md): the system Chromium, and their budgets.
CROVIA_CAPTURE_PAGES = env_default("CROVIA_CAPTURE_PAGES")
CROVIA_CHROMIUM = str(path_default("CROVIA_CHROMIUM"))
CROVIA_BROWSER_PAGES = env_default("CROVIA_BROWSER_PAGES")
CROVIA_BROWSER_SECONDS = env_default("CROVIA_BROWSER_SECONDS")
CROVIA_BROWSER_CONCURRENCY = env_default("CROVIA_BROWSER_CONCURRENCY")
CROVIA_BROWSER_MEMORY_MB = env_default("CROVIA_BROWSER_MEMORY_MB")
CROVIA_BROWSER_REQUESTS = env_default("CROVIA_BROWSER_REQUESTS")
# Set by `crovia capture`: fetch no feed, only the pages due (CROVIA_CAPTURE_ALL: every page).
CROVIA_CAPTURE_ONLY = False
CROVIA_CAPTURE_ALL = False
# Set: every crawl ends by writing Prometheus metrics there (crovia_spider/runs/metrics.py).
CROVIA_METRICS_FILE = env_default("CROVIA_METRICS_FILE")
CROVIA_PUBLISH_DIR = env_default("CROVIA_PUBLISH_DIR")
# A crawl cluster (docs/cluster.md): the daemons set the role and the work of their children.
CROVIA_REDIS_URL = env_default("CROVIA_REDIS_URL")
CROVIA_REDIS_RUN_TIMEOUT = env_default("CROVIA_REDIS_RUN_TIMEOUT")
CROVIA_REDIS_RESULT_BYTES = env_default("CROVIA_REDIS_RESULT_BYTES")
CROVIA_REDIS_NO_WORKER_SECONDS = env_default("CROVIA_REDIS_NO_WORKER_SECONDS")
CROVIA_JOB_KEY_FILE = str(path_default("CROVIA_JOB_KEY_FILE"))
CROVIA_REDIS_ROLE = ""
CROVIA_REDIS_JOBS = ""
CROVIA_REDIS_RUN = ""
# Set by `crovia worker` for its crawls, never by a job: the sequencer's pinned job key, and the
# hosts its command line lets the fetch policy reach on internal addresses (docs/cluster.md).
CROVIA_SEQUENCER_PUBKEY = ""
CROVIA_WORKER_ALLOW_PRIVATE = ""
CROVIA_WORKER_NAME = ""

# Say who we are and how to reach us; sites block anonymous scrapers, and should be able to ask.
USER_AGENT = user_agent(env_default("CROVIA_USER_AGENT"), CROVIA_CONTACT_URL)
ROBOTSTXT_OBEY = True

# Politeness: a few feeds per host, fetched hourly at most; no hurry. arXiv hosts get 1 request per
# 3 s on one connection (crovia_spider/fetching/politeness.py), per-feed `delay` can raise a
# host's delay.
CONCURRENT_REQUESTS_PER_DOMAIN = 2
DOWNLOAD_DELAY = 1.0

# Feed bodies are untrusted: cap their size and do not wait forever.
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
DOWNLOAD_TIMEOUT = 30

# Retries: Scrapy's, plus a wait (Retry-After for 429/503, else exponential backoff).
# A host that does not resolve is not retried: it will not resolve in seconds, and the next
# scheduled crawl tries again; this keeps an offline `make crawl` short.
RETRY_TIMES = 2
RETRY_EXCEPTIONS = [
    "scrapy.exceptions.DownloadConnectionRefusedError",
    "scrapy.exceptions.DownloadFailedError",
    "scrapy.exceptions.DownloadTimeoutError",
    "scrapy.exceptions.ResponseDataLossError",
    "twisted.internet.error.ConnectionDone",
    "twisted.internet.error.ConnectError",
    "twisted.internet.error.ConnectionLost",
]
RETRY_AFTER_MAX = 120.0
RETRY_BACKOFF_BASE = 2.0
# The fetch policy (docs/spider.md, 9) sees every request before it is downloaded: before
# RobotsTxtMiddleware (100), so a refused hop does not even have its robots.txt fetched. A redirect
# RedirectMiddleware (600) returns is scheduled as a new request and comes through it again.
DOWNLOADER_MIDDLEWARES = {
    "crovia_spider.fetching.middlewares.FetchPolicyMiddleware": 75,
    # Scrapy's lets all but the first requests waiting for a host's robots.txt through unchecked;
    # ours gives each its verdict (crovia_spider/fetching/middlewares.py).
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crovia_spider.fetching.middlewares.RobotsTxtMiddleware": 100,
    # No cookies (docs/spider.md, 9, "Cookies"): Scrapy's jar asks tldextract for the Public Suffix
    # List at the first Set-Cookie, which fetches it from the internet around the fetch policy.
    "scrapy.downloadermiddlewares.cookies.CookiesMiddleware": None,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "crovia_spider.fetching.middlewares.BackoffRetryMiddleware": 550,
    # A capture's heads, taken before HttpCompressionMiddleware (590) decodes the body.
    "crovia_spider.capture.heads.CaptureHeadsMiddleware": 595,
    # A cluster worker's per-host slot shared with every worker (inert elsewhere: NotConfigured).
    "crovia_spider.cluster.politeness.SharedSlotMiddleware": 985,
    # Last before the download: once a Ctrl-C stopped the crawl, nothing new is fetched.
    "crovia_spider.runs.stopping.StopGate": 990,
}
# Every request is the same anonymous one whatever a server answered before (and the middleware
# is out of the chain above, so `-s COOKIES_ENABLED=1` cannot bring the lookup back).
COOKIES_ENABLED = False
# One Ctrl-C (or SIGTERM) drops the requests queued in the downloader and says so on stderr
# (crovia_spider/runs/stopping.py); Scrapy's own graceful close would still fetch them all.
# After the crawl (its ledger sealed): its change events told to config/notify.toml's targets.
EXTENSIONS = {
    "crovia_spider.runs.stopping.StopFetching": 0,
    "crovia_spider.notify.extension.NotifyAfterCrawl": 100,
}
# A feed is XML; an HTML page that refreshes to somewhere else is not a feed, and following it would
# let a page decide what the feed's URL serves. Its hop would be checked anyway if this were on.
METAREFRESH_ENABLED = False

# Conditional GET is done by the spider from validators stored once items are durable
# (crovia_spider/runs/feed_state.py), so Scrapy's HTTP cache stays off (its default).

# Order matters: each stage needs the one before it (docs/design.md, step 3). The record must exist
# before it is fingerprinted; dedupe needs the fingerprint and identity; classification runs only
# for items that will be issued; issue signs what the stages before it produced.
ITEM_PIPELINES = {
    "pipelines.normalize.NormalizePipeline": 100,
    "pipelines.fingerprint.FingerprintPipeline": 200,
    "pipelines.dedupe.DedupePipeline": 300,
    "pipelines.classify.ClassifyPipeline": 400,
    "pipelines.issue.IssuePipeline": 500,
}

# A cron job's log: a few timestamped lines, the run's summary last
# (crovia_spider/runs/runsummary.py).
# Scrapy's banner, settings, middleware lists and stats are INFO: `-s LOG_LEVEL=INFO` or
# `crovia crawl --verbose` shows them, with one line per feed read.
LOG_LEVEL = "WARNING"
# Item lines are one short line each, never the whole item (crovia_spider/runs/logformatter.py).
LOG_FORMATTER = "crovia_spider.runs.logformatter.LogFormatter"
# `scrapy crawl` exits non-zero when the ledger refused a batch or the crawl was force-stopped.
COMMANDS_MODULE = "crovia_spider.commands"
# A cron job needs neither a telnet console nor a remote-control port.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
