"""The lobby says which network it is on, and switching it reaches the LAN and is remembered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from net.interfaces import NetworkInterface
from tests.ui.conftest import Harness
from tests.ui.test_lan_window import _button, _texts
from ui.config import load_settings
from ui.kit.network_picker import NetworkPicker

WIFI = NetworkInterface("wlan0", "192.168.1.20", 24, default_route=True)
ETHERNET = NetworkInterface("enp3s0", "10.0.0.7", 24)


def _networks(remembered: str) -> list[NetworkInterface]:
    """This laptop's usable networks, as nerts_lan.lan.networks ranks them (remembered first)."""
    found = [WIFI, ETHERNET]
    return sorted(found, key=lambda i: i.name != remembered)


def _picker(harness: Harness, switched: list[str | None]) -> NetworkPicker:
    picker = NetworkPicker(_networks, load_settings().network)
    harness.window.use_network(picker, switched.append)
    return picker


def _on(screen: Any) -> list[str]:
    return [text for text in _texts(screen) if text.startswith("On ")]


def test_the_menu_shows_the_network_and_the_picker_switches_and_remembers(
    harness: Harness, settings_dir: Path
) -> None:
    switched: list[str | None] = []
    picker = _picker(harness, switched)
    assert picker.address == "192.168.1.20"  # the default route's
    harness.window.show_menu()
    harness.frame()
    menu = harness.window.current
    assert _on(menu) == ["On Wi-Fi wlan0 · 192.168.1.20"]

    harness.click(*_button(menu, "Change network").rect.center)
    assert _on(harness.window.current) == ["On Ethernet enp3s0 · 10.0.0.7"]
    assert switched == ["10.0.0.7"]  # the lobby browses and plays there from now on
    assert load_settings().network == "enp3s0"

    # The menu saves its own copy of the settings: a change there keeps the network.
    harness.click(*_button(harness.window.current, "off").rect.center)  # partners on
    assert load_settings().partners and load_settings().network == "enp3s0"

    # The next window starts on the remembered network.
    assert NetworkPicker(_networks, load_settings().network).address == "10.0.0.7"


def test_the_host_form_shows_the_network_and_switches_it(harness: Harness) -> None:
    switched: list[str | None] = []
    _picker(harness, switched)
    harness.window.show_host_form()
    harness.frame()
    form = harness.window.current
    assert _on(form) == ["On Wi-Fi wlan0 · 192.168.1.20"]
    harness.click(*_button(form, "Change network").rect.center)
    harness.click(*_button(harness.window.current, "Change network").rect.center)
    assert switched == ["10.0.0.7", "192.168.1.20"]  # round the list
    assert load_settings().network == "wlan0"


def test_one_network_or_interface_given_offers_no_switch(harness: Harness) -> None:
    harness.window.use_network(NetworkPicker(lambda remembered: [WIFI]), print)
    harness.window.show_menu()
    assert "Change network" not in [b.text.text for b in harness.window.current.buttons]
    fixed = NetworkPicker(_networks, fixed="127.0.0.1")
    assert fixed.address == "127.0.0.1" and not fixed.can_switch
    harness.window.use_network(fixed, print)
    harness.window.show_menu()
    assert _on(harness.window.current) == ["On 127.0.0.1 (chosen with --interface)"]


def test_a_window_without_the_lan_shows_no_network(harness: Harness) -> None:
    harness.window.show_menu()
    assert _on(harness.window.current) == []


def test_the_lan_lobby_browses_again_on_the_network_picked() -> None:
    from ui.lobby.lan import LanLobby

    lobby = LanLobby(None)
    try:
        lobby.use_interface("127.0.0.1")  # before any browsing: nothing to stop
        lobby.tables()  # browses on 127.0.0.1
        assert lobby.interface == "127.0.0.1"
        first = lobby._browser
        lobby.use_interface("127.0.0.1")
        assert lobby._browser is None and first is not None  # the old browser is stopped
        lobby.tables()
        assert lobby._browser is not None and lobby._browser is not first
    finally:
        lobby.close()


def test_the_lan_window_plays_on_the_ranked_network_or_the_remembered_or_the_given_one(
    settings_dir: Path, monkeypatch: Any
) -> None:
    import nerts_lan.lan.networks
    from ui.app import make_lan_window
    from ui.config import WindowConfig, save_settings

    docker = NetworkInterface("docker0", "172.17.0.1", 16)

    def networks(remembered: str) -> list[NetworkInterface]:
        from net.interfaces import rank_interfaces

        return rank_interfaces([docker, ETHERNET, WIFI], "wlan0", remembered or None)

    monkeypatch.setattr(nerts_lan.lan.networks, "playable_networks", networks)
    interfaces = []
    for config in (WindowConfig(), None, WindowConfig(interface="127.0.0.1")):
        if config is None:
            save_settings(load_settings().with_(network="enp3s0"))
            config = WindowConfig()
        window = make_lan_window(config)
        try:
            interfaces.append(window.lobby.interface)  # no browsing until the menu polls
        finally:
            window.close()
    assert interfaces == ["192.168.1.20", "10.0.0.7", "127.0.0.1"]
