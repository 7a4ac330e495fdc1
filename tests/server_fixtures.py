"""Fixtures around the fake OpenAI-compatible server; test modules import the ones they use."""

from __future__ import annotations

import pytest

from fake_server import FakeServer

__all__ = ["fake_server_process", "server"]


@pytest.fixture(scope="session")
def fake_server_process():
    """One server process (two ports: two replicas) per test process, closed at the end."""
    process = FakeServer(ports=2)
    yield process
    process.close()


@pytest.fixture
def server(fake_server_process):
    """The session's server, with an empty log, no latency and no faults."""
    fake_server_process.control()
    fake_server_process.reset()
    yield fake_server_process
    fake_server_process.control()
