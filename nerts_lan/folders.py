"""Where nerts-lan keeps its files on this laptop: the config folder and the data folder.

Both come from ``platformdirs``, the usual place on each OS:

- config (settings): ``~/.config/nerts-lan`` on Linux, ``~/Library/Application Support/nerts-lan``
  on macOS, ``%APPDATA%\\nerts-lan`` on Windows;
- data (match logs, the history database, peer ids): ``~/.local/share/nerts-lan`` on Linux,
  ``~/Library/Application Support/nerts-lan`` on macOS, ``%LOCALAPPDATA%\\nerts-lan`` on Windows.

``NERTS_LAN_CONFIG_DIR`` and ``NERTS_LAN_DATA`` override them (tests use temporary folders).
Earlier versions wrote data to ``~/.local/share/nerts-lan`` on every OS: the first time the new
folder is asked for and does not exist, an old one is moved there (once; if it cannot be moved,
the old folder goes on being used, so nothing is lost).

Microsoft Store Python is the exception (``store_folders``): Windows gives each Store package a
private copy of AppData, ``%LOCALAPPDATA%\\Packages\\PythonSoftwareFoundation.Python.3.12_...\\
LocalCache\\{Local,Roaming}``, hidden, and per Python version: on an upgrade to 3.13 the
identity key, the history and the settings would be gone (and an uninstall deletes them). There
both folders live in ``%USERPROFILE%\\.nerts-lan`` (``config`` and ``data``): the user's own
profile folder, which Windows does not redirect, is the same for every Python, survives an
upgrade, and sits beside other tools' dot folders (``.ssh``). A Store folder of an earlier run is
moved there once, the newest Python version's first.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Final, Generic, TypeVar

import platformdirs

__all__ = [
    "APP",
    "CONFIG_ENV",
    "DATA_ENV",
    "StoreFolders",
    "config_folder",
    "data_folder",
    "old_data_folders",
    "store_folders",
]

APP: Final = "nerts-lan"
CONFIG_ENV: Final = "NERTS_LAN_CONFIG_DIR"
DATA_ENV: Final = "NERTS_LAN_DATA"

log = logging.getLogger(__name__)

STORE_PACKAGE: Final = re.compile(
    r"(?:^|[\\/])(?:WindowsApps|Packages)[\\/]PythonSoftwareFoundation\.Python\.(\d+)\.(\d+)_",
    re.IGNORECASE,
)
"""A Store Python's folder: its install (``C:\\Program Files\\WindowsApps\\PythonSoftwareFoundation.
Python.3.12_3.12.2800.0_x64__qbz5n2kfra8p0``), its launcher alias (``%LOCALAPPDATA%\\Microsoft\\
WindowsApps\\PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0``) or its private AppData."""

_UNMOVABLE: set[Path] = set()
"""Old data folders that could not be moved in this process (used where they are)."""

P = TypeVar("P", bound=PurePath)


@dataclass(frozen=True)
class StoreFolders(Generic[P]):
    """A Store Python's config and data folders, and the old places to move them from, in order."""

    config: P
    data: P
    old_config: list[P]
    old_data: list[P]


def config_folder() -> Path:
    """The folder the settings live in (not created here, except by moving an old Store one)."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override)
    store = _this_store_python()
    if store is not None:
        return _moved_once(store.config, store.old_config)
    return Path(platformdirs.user_config_dir(APP, appauthor=False, roaming=True))


def data_folder() -> Path:
    """This user's data folder (not created here); an old one is moved here the first time."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override)
    store = _this_store_python()
    if store is not None:
        return _moved_once(store.data, store.old_data + old_data_folders())
    new = Path(platformdirs.user_data_dir(APP, appauthor=False))
    return _moved_once(new, old_data_folders())


def store_folders(
    interpreter: Iterable[str], home: P, local_appdata: P | None, packages: Iterable[str]
) -> StoreFolders[P] | None:
    """Where a Store Python keeps the folders, or None when `interpreter` (``sys.executable``,
    ``sys.prefix``, ``sys.base_prefix``) is no Store Python's. `packages` are the names of the
    folders in `local_appdata`\\Packages: each Store Python's private AppData is an old place,
    the newest Python version's first (its data is the most recent), then what platformdirs
    names (what this process reads there is its own private copy, or a python.org Python's)."""
    if not any(STORE_PACKAGE.search(path) for path in interpreter):
        return None
    versions = []
    for name in packages:
        found = STORE_PACKAGE.search("Packages\\" + name)
        if found:
            versions.append(((int(found[1]), int(found[2])), name))
    own = home / f".{APP}"
    folders = StoreFolders(own / "config", own / "data", [], [])
    if local_appdata is not None:
        for _, name in sorted(versions, reverse=True):
            cache = local_appdata / "Packages" / name / "LocalCache"
            folders.old_config.append(cache / "Roaming" / APP)
            folders.old_data.append(cache / "Local" / APP)
        # %APPDATA% is %LOCALAPPDATA%'s sibling Roaming unless a domain redirects it.
        folders.old_config.append(local_appdata.parent / "Roaming" / APP)
        folders.old_data.append(local_appdata / APP)
    return folders


def old_data_folders() -> list[Path]:
    """Where earlier versions kept the data folder (the XDG path, on every OS)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return [base / APP]


def _this_store_python() -> StoreFolders[Path] | None:
    """``store_folders`` for this interpreter (the thin part: what it reads of this laptop)."""
    interpreter = (sys.executable or "", sys.prefix, sys.base_prefix)
    if not any(STORE_PACKAGE.search(path) for path in interpreter):
        return None
    local = os.environ.get("LOCALAPPDATA")
    local_appdata = Path(local) if local else None
    try:
        packages = [p.name for p in (local_appdata / "Packages").iterdir()] if local_appdata else []
    except OSError:
        packages = []
    return store_folders(interpreter, Path.home(), local_appdata, packages)


def _moved_once(new: Path, olds: list[Path]) -> Path:
    """``new``, after moving the first old folder that exists there if ``new`` does not exist
    yet; the old folder itself when it cannot be moved (read-only, another volume that fails)."""
    if new.exists():
        return new
    for old in olds:
        if old == new or not old.is_dir():
            continue
        if old in _UNMOVABLE:
            return old  # tried once in this process: try again at the next start
        try:
            new.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(old), str(new))
        except OSError as error:
            log.warning("could not move the data folder %s to %s: %s", old, new, error)
            _UNMOVABLE.add(old)
            return old
        log.info("moved the data folder %s to %s", old, new)
        return new
    return new
