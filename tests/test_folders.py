"""Config and data folders through platformdirs, and the old data folder moved there once."""

from __future__ import annotations

import shutil
from pathlib import Path

import platformdirs
import pytest

from nerts_lan import folders
from nerts_lan.history import record_new_logs
from ui.config import config_dir


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """An old XDG data folder holding a log, and where platformdirs puts the new one."""
    old_base, new = tmp_path / "xdg", tmp_path / "AppData" / "nerts-lan"
    (old_base / "nerts-lan" / "logs").mkdir(parents=True)
    (old_base / "nerts-lan" / "logs" / "0badcafe-p01.nlog").write_bytes(b"NERTSLOG1\n")
    monkeypatch.delenv(folders.DATA_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(old_base))
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda *a, **k: str(new))
    return old_base / "nerts-lan", new


def test_the_old_data_folder_is_moved_to_the_new_place_once(homes: tuple[Path, Path]) -> None:
    old, new = homes
    assert folders.data_folder() == new
    assert (new / "logs" / "0badcafe-p01.nlog").exists() and not old.exists()
    old.mkdir()  # something recreated the old folder: the new one, once there, stays the one
    assert folders.data_folder() == new and old.exists()


def test_a_data_folder_that_cannot_be_moved_is_used_where_it_is(
    homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = homes

    def refuse(*args: object) -> None:
        raise PermissionError("read-only volume")

    monkeypatch.setattr(shutil, "move", refuse)
    monkeypatch.setattr(folders, "_UNMOVABLE", set())
    assert folders.data_folder() == old and not new.exists()
    assert folders.data_folder() == old  # not tried again (nor warned about) in this process


def test_the_config_folder_comes_from_platformdirs_unless_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(folders.CONFIG_ENV, raising=False)
    monkeypatch.setattr(platformdirs, "user_config_dir", lambda *a, **k: str(tmp_path / "c"))
    assert config_dir() == tmp_path / "c"
    monkeypatch.setenv(folders.CONFIG_ENV, str(tmp_path / "mine"))
    assert config_dir() == tmp_path / "mine"


def test_a_data_folder_that_cannot_be_made_costs_the_history_not_the_game(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("in the way", encoding="utf-8")
    notice = record_new_logs(blocked / "data")
    assert notice is not None and "cannot be kept" in notice
