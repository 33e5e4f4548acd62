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
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Final

import platformdirs

__all__ = ["APP", "CONFIG_ENV", "DATA_ENV", "config_folder", "data_folder", "old_data_folders"]

APP: Final = "nerts-lan"
CONFIG_ENV: Final = "NERTS_LAN_CONFIG_DIR"
DATA_ENV: Final = "NERTS_LAN_DATA"

log = logging.getLogger(__name__)

_UNMOVABLE: set[Path] = set()
"""Old data folders that could not be moved in this process (used where they are)."""


def config_folder() -> Path:
    """The folder the settings live in (not created here)."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir(APP, appauthor=False, roaming=True))


def data_folder() -> Path:
    """This user's data folder (not created here); an old one is moved here the first time."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override)
    new = Path(platformdirs.user_data_dir(APP, appauthor=False))
    return _moved_once(new, old_data_folders())


def old_data_folders() -> list[Path]:
    """Where earlier versions kept the data folder (the XDG path, on every OS)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return [base / APP]


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
