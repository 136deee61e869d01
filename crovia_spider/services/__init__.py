"""Long-running HTTP services built on Twisted (the witness). Their logic lives in `ledger/`."""
