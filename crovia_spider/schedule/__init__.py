"""Scheduled harvesting: `crovia schedule` runs crawls and seals on a clock (APScheduler 3.x).

Modules, in the order a run goes through them: `config` (jobs from config/schedule.toml, validated),
`triggers` (crontab and duration triggers), `runner` (the foreground scheduler and its stop
signals), `children` (one child process per run), `outcome` (the run's result, read back from the
ledger dir). Where this sits in the data flow: docs/design.md; how to operate it:
docs/operations.md.
"""
