"""Transparency-log formats (C2SP): RFC 6962 tree, signed notes, checkpoints, tiles, proofs."""
