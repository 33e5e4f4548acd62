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
    "READOUTS",
    "Settings",
    "WindowConfig",
    "config_dir",
    "load_settings",
    "read_settings",
    "save_settings",
]

CARD_SIZES: Final = {"small": 0.8, "medium": 0.9, "large": 1.0}
"""Card size option: the share of the largest local cards that fit the window."""
READOUTS: Final = ("off", "everyone", "yours")
"""Move readout option: no sentences, every player's moves, or only this player's."""
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
    left_handed: bool = False
    """Accessibility: the player's own piles mirrored (the nerts pile on the right)."""
    high_visibility: bool = False
    """Accessibility: larger corner indices, four suit colours and stronger card outlines."""
    reduced_motion: bool = False
    """Accessibility: cards jump to their place instead of flying."""
    readout: str = "off"
    """Accessibility: each move as a sentence (one of ``READOUTS``)."""
    speak_moves: bool = False
    """Accessibility: the readout's sentences spoken by the system's speech command."""

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
    readout: bool = False
    """``--readout``: every move read out is also printed to standard output."""

    def __post_init__(self) -> None:
        for option, value in (("--width", self.width), ("--height", self.height)):
            if not MIN_SIDE <= value <= MAX_SIDE:
                raise ValueError(f"{option} must be from {MIN_SIDE} to {MAX_SIDE} pixels")


def config_dir() -> Path:
    """The folder the settings live in (not created until saved)."""
    return config_folder()


def load_settings() -> Settings:
    """The saved settings; defaults for anything missing, unreadable or of the wrong type."""
    return read_settings()[0]


def read_settings() -> tuple[Settings, str | None]:
    """The saved settings and what was wrong with the file, for the player (None: nothing).

    A missing file is no problem; a damaged or hostile one (not JSON, not UTF-8, nested too
    deep, not an object, values of the wrong type or out of range) gives the defaults for what
    could not be used, and says so."""
    path = config_dir() / "settings.json"
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return Settings(), None
    except (OSError, ValueError, RecursionError) as error:
        why = _short(error)
        return Settings(), f"Your settings file {path} could not be read ({why}): defaults used"
    if not isinstance(data, dict):
        return Settings(), f"Your settings file {path} holds no settings: the defaults are used"
    defaults = Settings()
    values: dict[str, Any] = {}
    ignored: list[str] = []
    for field in fields(Settings):
        value = data.get(field.name)
        default = getattr(defaults, field.name)
        if type(value) is type(default):
            values[field.name] = value
        elif field.name in data:
            ignored.append(field.name)
    settings = Settings(**values)
    checks = (
        ("card_size", settings.card_size in CARD_SIZES),
        ("host_teams", 1 <= settings.host_teams <= MAX_HOST_TEAMS),
        ("readout", settings.readout in READOUTS),
    )
    for name, valid in checks:
        if not valid:
            settings = settings.with_(**{name: getattr(defaults, name)})
            ignored.append(name)
    if not ignored:
        return settings, None
    names = ", ".join(sorted(ignored))
    return settings, f"Your settings file {path} had unusable values ({names}): defaults used"


def _short(error: BaseException) -> str:
    """An error in a few words (a hostile file's error may quote a lot of it)."""
    text = str(error) or type(error).__name__
    return text if len(text) <= 80 else text[:77] + "..."


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
