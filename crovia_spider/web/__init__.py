"""The browser verifier (`/v/<axiom_id>`) and the read-only static server for a published directory.

`verifier/` holds the page: one HTML file, one stylesheet, the verification core
(`verify-core.js`, pure: canonical JSON, hashes, signatures, Merkle path) and the DOM code
(`page.js`, which only renders the core's results with textContent). `crovia publish` copies it
into `<DIR>/v/`; `crovia serve` maps `/v/<axiom_id>` to it. docs/verifier.md explains both.
"""
