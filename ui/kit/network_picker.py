"""Which network the LAN lobby is on ("On Wi-Fi wlan0 · 192.168.1.20"), and a button to switch.

The window picks the interface with the default route, or the one the player picked before
(``Settings.network``), leaving Docker, VPN and virtual bridges out (``nerts_lan.lan.networks``).
The lobby's "Change network" button steps to the next usable interface; the window passes the
new address to the lobby and remembers the choice. A window opened with ``--interface`` shows
that address and offers no switch. ``network_warning(screen)`` is what the system is known to
block (macOS' Local Network privacy, Windows' Public profile or firewall: see
``nerts_lan.doctor.blocks``), which the menu and the lobby show in the warning colour. Nothing
here imports pyglet: screens draw it with their own ``text`` and ``button``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nerts_lan.doctor import blocks as network_blocks
from nerts_lan.lan.networks import Network
from ui.kit.geometry import Rect
from ui.kit.theme import TEXT_DIM

__all__ = ["NetworkPicker", "draw_network", "network_warning"]


class NetworkPicker:
    """The network the window's LAN uses, among those ``networks(remembered)`` lists (best
    first); ``on_switch(interface)`` is told when the player picks another."""

    def __init__(
        self,
        networks: Callable[[str], list[Network]],
        remembered: str = "",
        fixed: str | None = None,
    ) -> None:
        """``fixed``: the address ``--interface`` asked for (no switching then)."""
        self._networks = networks
        self.fixed = fixed
        self.choices: list[Network] = [] if fixed else self._list(remembered)
        self.current: Network | None = self.choices[0] if self.choices else None
        self.on_switch: Callable[[Network], None] | None = None
        self.warning: Callable[[], str] = network_blocks.network_warning
        """What blocks this laptop from the LAN, in one line ("": nothing known)."""

    @property
    def address(self) -> str | None:
        """The IPv4 address the LAN uses (None: none found, so every interface)."""
        if self.fixed is not None:
            return self.fixed
        return self.current.address if self.current is not None else None

    def caption(self) -> str:
        """Where the lobby is: "On Wi-Fi wlan0 · 192.168.1.20"."""
        if self.fixed is not None:
            return f"On {self.fixed} (chosen with --interface)"
        if self.current is None:
            return "On every network (none looks like a LAN)"
        return f"On {self.current.describe()}"

    @property
    def can_switch(self) -> bool:
        return self.fixed is None and len(self.choices) > 1

    def switch(self, step: int = 1) -> None:
        """Use the next usable network (``step`` -1: the previous one). The list is read again,
        so a network joined since shows up."""
        if self.fixed is not None:
            return
        self.choices = self._list("")
        if not self.choices:
            return
        here = [(i.name, i.address) for i in self.choices]
        now = (self.current.name, self.current.address) if self.current is not None else None
        index = here.index(now) + step if now in here else 0
        self.current = self.choices[index % len(self.choices)]
        if self.on_switch is not None:
            self.on_switch(self.current)

    def _list(self, remembered: str) -> list[Network]:
        try:
            return list(self._networks(remembered))
        except OSError:
            return []


def draw_network(screen: Any, x: float, y: float, right: float) -> None:
    """The window's network line on ``screen`` (a ``FormScreen`` of the window) from ``x`` to
    ``right``, its middle at ``y``, with "Change network" when there is another; nothing when
    the window has no LAN."""
    from ui.kit.widgets import fit  # loads pyglet: only a window draws

    picker: NetworkPicker | None = getattr(screen.window, "network", None)
    if picker is None:
        return
    room = right - x
    if picker.can_switch:
        # A narrow window keeps the room for the network's name.
        caption, width = ("Change network", 140.0) if room >= 400 else ("Change", 80.0)
        room -= width + 10

        def switch() -> None:
            picker.switch()
            screen.resize(screen.window.width, screen.window.height)

        screen.button(Rect(right - width, y - 15, width, 30), caption, switch)
    shown = screen.text(picker.caption(), x, y, size=12, colour=TEXT_DIM, anchor_y="center")
    fit(shown, max(room, 40.0))


def network_warning(screen: Any) -> str:
    """What blocks the window's LAN, in one line ("" when nothing is known, or no LAN)."""
    picker: NetworkPicker | None = getattr(screen.window, "network", None)
    return picker.warning() if picker is not None else ""
