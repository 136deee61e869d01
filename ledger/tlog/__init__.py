"""Transparency-log formats, pure: no storage, no I/O (STYLE.md, "Logs, proofs and stamps").

- `rfc6962`: the RFC 6962 / RFC 9162 Merkle tree: hashes, roots, inclusion and consistency proofs
  (made from a source of complete nodes, verified from bytes), and `CompactRange`.
- `note`: C2SP signed notes with Ed25519 keys (signer, verifier keys, strict parsing).
- `checkpoint`: C2SP tlog-checkpoint bodies.
- `cosignature`: C2SP tlog-cosignature/v1 (timestamped Ed25519 cosignatures).
- `proof`: the c2sp.org/tlog-proof@v1 file.
- `tiles`: C2SP tlog-tiles paths, hash tiles, entry bundles, the tiles a growing tree changes.
- `tile_tree`: complete nodes read back from tiles, and a tree grown over them from new leaves.

Storage of the tree and the checkpoints is `ledger/store/tlog_store.py`; docs/ledger.md describes
both.
"""
