"""The player's settings, remembered between runs in the user's config folder.

``NERTS_LAN_CONFIG_DIR`` overrides the folder (tests use a temporary one); otherwise it is the
OS's own config folder for nerts-lan (``nerts_lan.folders``, through platformdirs: the same
places earlier versions wrote by hand). A missing or damaged file gives the defaults; nothing here
imports pyglet.

``WindowConfig`` is how the window opens (the command line builds it before pyglet is loaded).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

from nerts_lan.folders import config_folder

__all__ = [
    "CARD_SIZES",
    "MAX_HOST_TEAMS",
    "Settings",
    "WindowConfig",
    "config_dir",
    "load_settings",
    "save_settings",
]

CARD_SIZES: Final = {"small": 0.8, "medium": 0.9, "large": 1.0}
"""Card size option: the share of the largest local cards that fit the window."""
MAX_HOST_TEAMS: Final = 8
"""The most teams (seats) the host form offers."""
MIN_SIDE: Final = 320
MAX_SIDE: Final = 16384
"""Bounds of the window's width and height as asked on the command line, in pixels."""


@dataclass(frozen=True)
class Settings:
    """What the player chose, with defaults for a first run."""

    player_name: str = ""
    sounds: bool = True
    suit_callouts: bool = False
    """After a foundation play, its suit's motif (``ui.kit.soundbank``): play by ear."""
    four_colour: bool = False
    card_size: str = "large"
    opponents: int = 1
    level: str = "easy"
    """A first practice game is gentle: one easy bot (a newcomer against three medium bots saw
    the round end in 90 seconds with nothing played). Once changed, the choice is remembered."""
    flip: int = 3
    partners: bool = False
    guide_offered: bool = False
    """The guided first round has been offered (the first practice game from the menu)."""
    network: str = ""
    """The interface the player picked in the lobby ("wlan0"; "" for the default route's)."""
    host_teams: int = 4
    """The Teams the host form last showed (1 to ``MAX_HOST_TEAMS``): it opens with them."""

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)


@dataclass(frozen=True)
class WindowConfig:
    """How the window opens; a bad size raises ``ValueError`` naming its option."""

    width: int = 1280
    height: int = 800
    fullscreen: bool = False
    interface: str | None = None
    """Use only this IPv4 address for the LAN, mDNS and TCP (None: every interface)."""

    def __post_init__(self) -> None:
        for option, value in (("--width", self.width), ("--height", self.height)):
            if not MIN_SIDE <= value <= MAX_SIDE:
                raise ValueError(f"{option} must be from {MIN_SIDE} to {MAX_SIDE} pixels")


def config_dir() -> Path:
    """The folder the settings live in (not created until saved)."""
    return config_folder()


def load_settings() -> Settings:
    """The saved settings; defaults for anything missing, unreadable or of the wrong type."""
    try:
        data = json.loads((config_dir() / "settings.json").read_text("utf-8"))
    except (OSError, ValueError):
        return Settings()
    if not isinstance(data, dict):
        return Settings()
    defaults = Settings()
    values: dict[str, Any] = {}
    for field in fields(Settings):
        value = data.get(field.name)
        default = getattr(defaults, field.name)
        if type(value) is type(default):
            values[field.name] = value
    settings = Settings(**values)
    if settings.card_size not in CARD_SIZES:
        settings = settings.with_(card_size=defaults.card_size)
    if not 1 <= settings.host_teams <= MAX_HOST_TEAMS:
        settings = settings.with_(host_teams=defaults.host_teams)
    return settings


def save_settings(settings: Settings) -> None:
    """Write the settings (best effort: a read-only home folder does not stop the game)."""
    folder = config_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / "settings.json.tmp"
        temporary.write_text(json.dumps(asdict(settings), indent=2) + "\n", "utf-8")
        temporary.replace(folder / "settings.json")
    except OSError:
        pass
