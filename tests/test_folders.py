"""Config and data folders through platformdirs, and the old data folder moved there once."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path, PureWindowsPath

import platformdirs
import pytest

from nerts_lan import folders
from nerts_lan.history.store import record_new_logs
from nerts_lan.lan.identity import key_path
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


# Microsoft Store Python: its AppData is a hidden copy per package (per Python version), so the
# folders live in the profile instead. The paths are those of a real Windows 11 laptop.
STORE_ALIAS = (
    r"C:\Users\Zoe\AppData\Local\Microsoft\WindowsApps"
    r"\PythonSoftwareFoundation.Python.3.13_qbz5n2kfra8p0\python.exe"
)
STORE_INSTALL = (
    r"C:\Program Files\WindowsApps"
    r"\PythonSoftwareFoundation.Python.3.13_3.13.1008.0_x64__qbz5n2kfra8p0"
)
PYTHON_ORG = r"C:\Users\Zoe\AppData\Local\Programs\Python\Python313"
VENV = r"C:\Users\Zoe\nerts\.venv"
PACKAGES = [
    "Microsoft.WindowsTerminal_8wekyb3d8bbwe",
    "PythonSoftwareFoundation.Python.3.9_qbz5n2kfra8p0",
    "PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0",
    "PythonSoftwareFoundation.Python.3.13_qbz5n2kfra8p0",
]


@pytest.mark.parametrize(
    ("interpreter", "store"),
    [
        ((STORE_ALIAS, STORE_INSTALL, STORE_INSTALL), True),  # run as `python` from the Store
        ((VENV + r"\Scripts\python.exe", VENV, STORE_INSTALL), True),  # a venv of it
        ((PYTHON_ORG + r"\python.exe", PYTHON_ORG, PYTHON_ORG), False),
        ((r"C:\Program Files\WindowsApps\Microsoft.WindowsTerminal_1.21\wt.exe",) * 3, False),
        (("/usr/bin/python3", "/usr", "/usr"), False),
    ],
)
def test_store_python_is_told_by_its_install_folder(
    interpreter: tuple[str, ...], store: bool
) -> None:
    found = folders.store_folders(
        interpreter,
        PureWindowsPath(r"C:\Users\Zoe"),
        PureWindowsPath(r"C:\Users\Zoe\AppData\Local"),
        [],
    )
    assert (found is not None) == store


def test_store_python_keeps_the_folders_in_the_profile_and_moves_the_newest_store_ones() -> None:
    found = folders.store_folders(
        (STORE_ALIAS, STORE_INSTALL, STORE_INSTALL),
        PureWindowsPath(r"C:\Users\Zoe"),
        PureWindowsPath(r"C:\Users\Zoe\AppData\Local"),
        PACKAGES,
    )
    assert found is not None
    assert found.data == PureWindowsPath(r"C:\Users\Zoe\.nerts-lan\data")
    assert found.config == PureWindowsPath(r"C:\Users\Zoe\.nerts-lan\config")
    cache = r"C:\Users\Zoe\AppData\Local\Packages\PythonSoftwareFoundation.Python.{}_qbz5n2kfra8p0"
    assert found.old_data == [
        PureWindowsPath(cache.format(version) + r"\LocalCache\Local\nerts-lan")
        for version in ("3.13", "3.12", "3.9")  # by version, not by name: 3.9 is the oldest
    ] + [PureWindowsPath(r"C:\Users\Zoe\AppData\Local\nerts-lan")]
    assert found.old_config == [
        PureWindowsPath(cache.format(version) + r"\LocalCache\Roaming\nerts-lan")
        for version in ("3.13", "3.12", "3.9")
    ] + [PureWindowsPath(r"C:\Users\Zoe\AppData\Roaming\nerts-lan")]


def test_an_upgrade_of_store_python_keeps_the_identity_and_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The laptop's key and logs written by Store Python 3.12 (in its private AppData), read by
    Store Python 3.13: moved once into the profile's folder, and found there from then on."""
    home, local = tmp_path / "Zoe", tmp_path / "Zoe" / "AppData" / "Local"
    cache = local / "Packages" / "PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0" / "LocalCache"
    (cache / "Local" / "nerts-lan" / "logs").mkdir(parents=True)
    (cache / "Local" / "nerts-lan" / "peer.key").write_bytes(b"key of this laptop")
    (cache / "Roaming" / "nerts-lan").mkdir(parents=True)
    (cache / "Roaming" / "nerts-lan" / "settings.json").write_text("{}", encoding="utf-8")
    for variable in (folders.DATA_ENV, folders.CONFIG_ENV):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("LOCALAPPDATA", str(local))
    monkeypatch.setattr(sys, "base_prefix", STORE_INSTALL)
    data, config = folders.data_folder(), folders.config_folder()
    assert data == home / ".nerts-lan" / "data" and config == home / ".nerts-lan" / "config"
    assert key_path().read_bytes() == b"key of this laptop" and (data / "logs").is_dir()
    assert (config / "settings.json").read_text(encoding="utf-8") == "{}"
    assert not (cache / "Local" / "nerts-lan").exists()
    (cache / "Local" / "nerts-lan").mkdir()  # an old nerts-lan ran on 3.12 again: ours stays
    assert folders.data_folder() == data and key_path().exists()
