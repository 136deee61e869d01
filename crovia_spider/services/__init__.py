"""Long-running HTTP services built on Twisted (the witness). Their logic lives in `ledger/`
(ledger.monitor.Witness decides what to cosign); this room only serves it over HTTP with our
path rules, body limits and headers, and imports the web room for the shared bounded reader.
"""
