"""Fixtures of the cluster tests: a real redis-server, started as a subprocess on 127.0.0.1.

Each test that uses `redis_server` starts its own child process, so tests/conftest.py marks it
slow (the word subprocess in this file); it is then in `make test`, not in `make check`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.redis_server import RedisServer


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A started redis-server of its own (no append-only file) in tmp_path/redis, stopped after."""
    with RedisServer(tmp_path / "redis") as server:
        yield server
