"""Notifications: each change event told at once, signed, to whoever needs it (docs/watching.md,
"Notifications").

`config` reads config/notify.toml (webhooks, Apprise URLs, the non-global targets allowed);
`keys` holds the notify key (Ed25519, its own, never the ledger's) and the Standard Webhooks
`v1a` signature; `outbox` is the durable at-least-once outbox in the ledger directory, each
message's id derived from its endpoint and event so a retry, a crash or a restart never sends one
event under two ids; `send` makes one time-bounded POST through the fetch policy (no redirect
followed) or one Apprise notification; `run` enqueues the new events and delivers what is due;
`extension` runs it after every crawl. Imports the ledger's rooms, `config`, `runs` (the atomic
state file) and `fetching` (the fetch policy's rules); the CLI imports it.
"""
