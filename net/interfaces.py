"""Which network interface a LAN game should use: this machine's IPv4 interfaces, the one with
the default route, and a ranking that puts the likely LAN (Wi-Fi, then Ethernet) first and leaves
out Docker, VPN and virtual-machine bridges.

A laptop carries many interfaces (docker0, a VPN's tun0 or wg0, VirtualBox's vboxnet0) and
picking the first one found, or all of them, advertises addresses no friend can reach. The
ranking is a pure function of what the readers found (``rank_interfaces``); the readers
(``read_interfaces`` with ifaddr, ``default_route_interface`` from /proc/net/route on Linux and,
elsewhere, the source address the kernel picks for a UDP socket connected to a documentation
address: connecting a UDP socket sends nothing) are best effort and find nothing on failure.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import ifaddr

__all__ = [
    "PROC_ROUTE",
    "VIRTUAL_PREFIXES",
    "NetworkInterface",
    "default_route_interface",
    "parse_proc_route",
    "rank_interfaces",
    "read_interfaces",
    "skip_reason",
    "usable_interfaces",
]

PROC_ROUTE: Final = Path("/proc/net/route")
"""Linux's IPv4 routing table (the network namespace's own, inside one)."""
VIRTUAL_PREFIXES: Final = (
    "docker",
    "br-",
    "veth",
    "virbr",
    "vboxnet",
    "vmnet",
    "tun",
    "tap",
    "wg",
    "tailscale",
    "zt",
    "utun",
    "lxcbr",
    "lxdbr",
    "podman",
    "cni",
    "flannel",
    "vethernet",
)
"""Name prefixes (case ignored) of the interfaces of containers, VPNs and virtual machines."""
_VIRTUAL_WORDS: Final = ("virtual", "vpn", "hyper-v", "vmware", "virtualbox", "tap-windows")
"""Words in a Windows adapter's friendly name that say it is not the LAN."""
_WIFI_PREFIXES: Final = ("wl",)
_ETHERNET_PREFIXES: Final = ("eth", "enp", "eno", "ens", "enx", "em")
_LINK_LOCAL: Final = ipaddress.IPv4Network("169.254.0.0/16")
_DOCUMENTATION_ADDRESS: Final = "192.0.2.1"
"""TEST-NET-1 (RFC 5737): never a real host. Connecting a UDP socket to it picks a route."""


@dataclass(frozen=True)
class NetworkInterface:
    """One IPv4 address of one interface, as the machine lists it."""

    name: str
    """The system's name ("wlan0"; on Windows an adapter id)."""
    address: str
    prefix: int = 24
    nice_name: str = ""
    """What the system shows the user ("Wi-Fi" on Windows; the name elsewhere)."""
    default_route: bool = False
    """The machine's default route goes out of this interface."""

    @property
    def label(self) -> str:
        return self.nice_name or self.name

    @property
    def kind(self) -> str:
        """What the interface is: "Wi-Fi", "Ethernet", "loopback", "virtual" or "network"."""
        names = (self.name.lower(), self.label.lower())
        if self.name in ("lo", "lo0") or self.address.startswith("127."):
            return "loopback"
        if any(n.startswith(VIRTUAL_PREFIXES) for n in names) or any(
            word in names[1] for word in _VIRTUAL_WORDS
        ):
            return "virtual"
        if names[0].startswith(_WIFI_PREFIXES) or any(
            word in names[1] for word in ("wi-fi", "wifi", "wireless", "wlan")
        ):
            return "Wi-Fi"
        if names[0].startswith(_ETHERNET_PREFIXES) or "ethernet" in names[1]:
            return "Ethernet"
        return "network"

    @property
    def link_local(self) -> bool:
        """A 169.254 address: the interface found no DHCP server (rarely the LAN)."""
        return ipaddress.IPv4Address(self.address) in _LINK_LOCAL

    def describe(self) -> str:
        """What a player reads: "Wi-Fi wlan0 · 192.168.1.20"."""
        kind = self.kind
        if kind in ("virtual", "network") or kind.lower() in self.label.lower():
            return f"{self.label} · {self.address}"
        return f"{kind} {self.label} · {self.address}"


def rank_interfaces(
    interfaces: Iterable[NetworkInterface],
    default_route: str | None = None,
    remembered: str | None = None,
) -> list[NetworkInterface]:
    """The usable interfaces, best first: the ``remembered`` one (a name or an address) if it is
    still here; then the one with the ``default_route`` (by name) unless it is virtual; then
    Wi-Fi, Ethernet, the others, link-local addresses last. Virtual interfaces (``skip_reason``)
    only when there is nothing else, and loopback only when there is nothing at all."""
    found = [_with_route(i, default_route) for i in interfaces]
    chosen = [i for i in found if remembered and remembered in (i.name, i.address)]
    ordinary = [i for i in found if skip_reason(i) is None and i not in chosen]
    virtual = [i for i in found if i.kind == "virtual" and i not in chosen]
    loopback = [i for i in found if i.kind == "loopback" and i not in chosen]
    rest = ordinary or virtual or loopback
    return chosen + sorted(rest, key=_preference)


def skip_reason(interface: NetworkInterface) -> str | None:
    """Why the ranking leaves ``interface`` out by default ("virtual", "loopback"), or None."""
    kind = interface.kind
    return kind if kind in ("virtual", "loopback") else None


def usable_interfaces(remembered: str | None = None) -> list[NetworkInterface]:
    """This machine's usable interfaces now, best first (``rank_interfaces``)."""
    found = read_interfaces()
    return rank_interfaces(found, default_route_interface(found), remembered)


def read_interfaces() -> list[NetworkInterface]:
    """Every IPv4 address of every interface (loopback included); none if they cannot be read."""
    found: list[NetworkInterface] = []
    with contextlib.suppress(OSError, ValueError, AttributeError):
        for adapter in ifaddr.get_adapters():
            for ip in adapter.ips:
                if isinstance(ip.ip, str):
                    nice = adapter.nice_name if adapter.nice_name != adapter.name else ""
                    found.append(NetworkInterface(adapter.name, ip.ip, ip.network_prefix, nice))
    return found


def default_route_interface(
    interfaces: Iterable[NetworkInterface], routes: Path = PROC_ROUTE
) -> str | None:
    """The name of the interface the default route goes out of: from ``routes`` (Linux) when it
    can be read, else the interface whose address the kernel would send from towards a
    documentation address (no packet is sent); None when there is no default route."""
    try:
        text = routes.read_text("ascii", errors="replace")
    except OSError:
        source = _route_source(_DOCUMENTATION_ADDRESS)
        return next((i.name for i in interfaces if i.address == source), None)
    return parse_proc_route(text)


def parse_proc_route(text: str) -> str | None:
    """The interface of the default route that is up with the lowest metric, in the text of
    /proc/net/route; None when there is none (or the text is not of that form)."""
    best: tuple[int, str] | None = None
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        name, destination, _gateway, flags, _refs, _use, metric, mask = fields[:8]
        try:
            up = int(flags, 16) & 1
            cost = int(metric)
        except ValueError:
            continue
        if destination == mask == "00000000" and up and (best is None or cost < best[0]):
            best = (cost, name)
    return best[1] if best is not None else None


def _route_source(target: str) -> str | None:
    """The address this machine would send from towards ``target`` (None: no route)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((target, 9))  # a UDP connect only picks the route: nothing is sent
            return str(probe.getsockname()[0])
    except OSError:
        return None


def _with_route(interface: NetworkInterface, default_route: str | None) -> NetworkInterface:
    if default_route is None or interface.name != default_route:
        return interface
    return replace(interface, default_route=True)


def _preference(interface: NetworkInterface) -> tuple[bool, bool, int, str, str]:
    kinds = ("Wi-Fi", "Ethernet", "network", "virtual", "loopback")
    return (
        not interface.default_route,
        interface.link_local,
        kinds.index(interface.kind),
        interface.name,
        interface.address,
    )
