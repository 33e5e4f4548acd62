"""Shared test settings: no test writes into the real user's data folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.leaks import no_leaks


@pytest.fixture(autouse=True)
def _private_data_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("nerts-data")
    monkeypatch.setenv("NERTS_LAN_DATA", str(folder))
    yield folder


# Every test is marked by where it runs, so the inner loop can leave the slow kinds out:
# python3 -m pytest -m "not sim and not realnet and not netns and not window"
_MARKS_BY_PATH = (
    ("tests/net_real/test_netns", "netns"),
    ("tests/net_real/", "realnet"),
    ("tests/ui/test_layout.py", None),
    ("tests/ui/test_wording.py", None),
    ("tests/ui/test_message_board.py", None),
    ("tests/ui/", "window"),
    ("tests/net/test_simnet.py", "sim"),
    ("tests/net/test_partition.py", "sim"),
    ("tests/net/test_stranger.py", "sim"),
    ("tests/test_simgame.py", "sim"),
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        where = Path(str(item.path)).relative_to(root).as_posix()
        for prefix, mark in _MARKS_BY_PATH:
            if where.startswith(prefix):
                if mark is not None:
                    item.add_marker(mark)
                break


@pytest.fixture(autouse=True)
def _no_leaks() -> Iterator[None]:
    """Every test must close the threads, tasks and sockets it opened (see tests/leaks.py)."""
    with no_leaks():
        yield
