"""Soak runs (marker `slow`) only run with NERTS_SLOW=1 or when selected with ``-m slow``."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("NERTS_SLOW") == "1" or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="soak run: set NERTS_SLOW=1 or use -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
