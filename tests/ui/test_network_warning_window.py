"""The window says what blocks this laptop from the LAN, with the setting to change: macOS'
Local Network privacy (a multicast send refused with EHOSTUNREACH, errno 65 there) and Windows'
Public profile (read from recorded PowerShell output), in the menu and at the bottom of the
host's form, in the warning colour; and nothing when nothing is known."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nerts_lan.doctor import blocks as network_blocks
from nerts_lan.doctor.windows import WindowsFindings, parse_profiles
from net import refusals
from net.interfaces import NetworkInterface
from tests.ui.conftest import Harness
from tests.ui.test_lan_window import _texts
from ui.kit.network_picker import NetworkPicker
from ui.kit.theme import WARN

WIFI = NetworkInterface("en0", "192.168.1.20", 24, default_route=True)
MACOS = "macOS blocks this app from your network: System Settings → Privacy & Security"
OUTPUTS = Path(__file__).parents[1] / "platform_outputs"


@pytest.fixture
def fresh_refusals() -> Iterator[None]:
    refusals.clear()
    yield
    refusals.clear()


def _warnings(screen: object) -> list[str]:
    return [
        item.text
        for item in screen.items  # type: ignore[attr-defined]
        if hasattr(item, "text") and tuple(item.color[:3]) == WARN
    ]


def test_macos_local_network_denial_is_said_in_the_menu_and_the_host_form(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, fresh_refusals: None
) -> None:
    monkeypatch.setattr(network_blocks, "PLATFORM", "darwin")
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    harness.window.use_network(NetworkPicker(lambda remembered: [WIFI]), print)
    harness.window.show_menu()
    harness.frame()
    assert not any(MACOS in text for text in _texts(harness.window.current))

    denied = OSError(network_blocks.MACOS_EHOSTUNREACH, "No route to host")
    refusals.record(refusals.MULTICAST_SEND, denied)  # as zeroconf's first send meets it
    harness.frame()  # the menu notices on its own
    [line] = [t for t in _warnings(harness.window.current) if MACOS in t]
    assert line.endswith("Local Network → allow iTerm (then start nerts-lan again)")

    harness.window.show_host_form()
    harness.frame()
    assert any(MACOS in t for t in _warnings(harness.window.current))


def test_a_public_windows_network_is_said_in_the_menu(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, fresh_refusals: None
) -> None:
    recorded = (OUTPUTS / "profiles_ps51.json").read_text(encoding="utf-8")
    found = WindowsFindings(profiles=parse_profiles(recorded), rules=[])
    monkeypatch.setattr(network_blocks, "PLATFORM", "win32")
    monkeypatch.setattr(network_blocks, "_WINDOWS", network_blocks._WindowsRead())
    monkeypatch.setattr(network_blocks, "read_windows", lambda: found)
    harness.window.use_network(NetworkPicker(lambda remembered: [WIFI]), print)
    harness.window.show_menu()

    def said() -> bool:
        harness.frame()
        return any("Public network" in t for t in _warnings(harness.window.current))

    from tests.waiting import until

    until(said, 10, what="the menu to say the network is Public")
    [line] = [t for t in _warnings(harness.window.current) if "Public network" in t]
    assert line == (
        'Windows blocks other laptops on the Public network "Cafe Lumiere Guest": Settings → '
        "Network & Internet → Wi-Fi → Cafe Lumiere Guest → Network profile type: Private"
    )


def test_a_window_without_the_lan_says_nothing_of_it(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, fresh_refusals: None
) -> None:
    monkeypatch.setattr(network_blocks, "PLATFORM", "darwin")
    refusals.record(refusals.MULTICAST_SEND, OSError(network_blocks.MACOS_EHOSTUNREACH, "No"))
    harness.window.show_menu()
    assert not any(MACOS in text for text in _texts(harness.window.current))
