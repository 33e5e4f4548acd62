"""The networks this laptop can play on, for the window and ``nerts-lan doctor``.

The window reaches the network only through ``nerts_lan``: this module hands it the ranking of
``net.interfaces`` (the default route's interface or the player's remembered choice first;
Docker, VPN and virtual bridges left out) and reads the choice the window remembered.
"""

from __future__ import annotations

import json
from typing import Final, TypeAlias

from nerts_lan.folders import config_folder
from net import NetworkInterface, usable_interfaces

__all__ = [
    "NETWORK_SETTING",
    "Network",
    "playable_networks",
    "remembered_network",
]

Network: TypeAlias = NetworkInterface
"""One network the player may play on, as the window lists it (a name, an address, why it is
left out if it is): the window never imports ``net`` itself."""

NETWORK_SETTING: Final = "network"
"""The key of the window's settings file (``ui.config.Settings.network``) that remembers the
interface the player picked, by name ("wlan0")."""
_SETTINGS_FILE: Final = "settings.json"


def playable_networks(remembered: str = "") -> list[NetworkInterface]:
    """The interfaces a table can use now, best first (``remembered`` first if still here)."""
    return usable_interfaces(remembered or None)


def remembered_network() -> str:
    """The interface the player picked in the window's lobby ("" when none, or unreadable)."""
    try:
        settings = json.loads((config_folder() / _SETTINGS_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return ""
    value = settings.get(NETWORK_SETTING) if isinstance(settings, dict) else None
    return value if isinstance(value, str) else ""
