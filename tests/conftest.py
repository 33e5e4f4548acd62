"""Shared test settings: no test writes into the real user's data folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_data_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("nerts-data")
    monkeypatch.setenv("NERTS_LAN_DATA", str(folder))
    yield folder
