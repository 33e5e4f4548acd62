"""Fixtures of the real-network tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.net_real.netlab import NetLab


@pytest.fixture
def lab3() -> Iterator[NetLab]:
    """Three hosts in network namespaces (a test module may define its own)."""
    lab = NetLab(3)
    yield lab
    lab.close()
