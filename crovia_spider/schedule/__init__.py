"""Scheduled harvesting: `crovia schedule` runs crawls and seals on a clock (APScheduler 3.x).

Modules, in the order a run goes through them:
- `config`: the jobs of config/schedule.toml, validated;
- `triggers`: crontab and duration triggers;
- `runner`: the foreground scheduler and its stop signals;
- `children`: one child process per run (`scrapy crawl ...` or `crovia seal`);
- `outcome`: what the run did, read back from the ledger directory.
The crawls it starts follow the data flow of docs/design.md; operating it: docs/operations.md.
"""
