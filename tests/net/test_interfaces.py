"""Which interface the game picks: the LAN the player is on, not Docker's or a VPN's."""

from __future__ import annotations

from pathlib import Path

import pytest

from net.interfaces import (
    NetworkInterface,
    default_route_interface,
    parse_proc_route,
    rank_interfaces,
    skip_reason,
)

LO = NetworkInterface("lo", "127.0.0.1", 8)
WIFI = NetworkInterface("wlan0", "192.168.1.20", 24)
ETHERNET = NetworkInterface("enp3s0", "10.0.0.7", 24)
DOCKER = NetworkInterface("docker0", "172.17.0.1", 16)
BRIDGE = NetworkInterface("br-5f2c81d0a1b3", "172.18.0.1", 16)
VPN = NetworkInterface("tun0", "10.8.0.2", 24)
WIREGUARD = NetworkInterface("wg0", "10.66.0.2", 32)
TAILSCALE = NetworkInterface("tailscale0", "100.101.102.103", 32)
VIRTUALBOX = NetworkInterface("vboxnet0", "192.168.56.1", 24)

ROUTES = """\
Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
tun0\t00000000\t0100080A\t0003\t0\t0\t50\t00000000\t0\t0\t0
wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0
wlan0\t0001A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0
eth9\t00000000\t0101A8C0\t0002\t0\t0\t1\t00000000\t0\t0\t0
"""


def _names(ranked: list[NetworkInterface]) -> list[str]:
    return [i.name for i in ranked]


def test_docker_vpn_and_virtual_bridges_are_skipped() -> None:
    everything = [LO, DOCKER, BRIDGE, VPN, WIREGUARD, TAILSCALE, VIRTUALBOX, WIFI]
    assert _names(rank_interfaces(everything)) == ["wlan0"]
    for skipped in (DOCKER, BRIDGE, VPN, WIREGUARD, TAILSCALE, VIRTUALBOX):
        assert skip_reason(skipped) == "virtual", skipped.name
    assert skip_reason(LO) == "loopback" and skip_reason(WIFI) is None


def test_the_default_route_comes_first_then_wi_fi_then_ethernet() -> None:
    other = NetworkInterface("en7", "10.1.2.3", 24)
    assert _names(rank_interfaces([other, ETHERNET, WIFI])) == ["wlan0", "enp3s0", "en7"]
    ranked = rank_interfaces([other, ETHERNET, WIFI], default_route="enp3s0")
    assert _names(ranked) == ["enp3s0", "wlan0", "en7"]
    assert ranked[0].default_route and not ranked[1].default_route


def test_a_vpn_with_the_default_route_is_still_skipped() -> None:
    assert _names(rank_interfaces([VPN, WIFI, DOCKER], default_route="tun0")) == ["wlan0"]


def test_the_remembered_choice_wins_while_it_is_there() -> None:
    assert _names(rank_interfaces([WIFI, ETHERNET], "wlan0", remembered="enp3s0"))[0] == "enp3s0"
    by_address = rank_interfaces([WIFI, ETHERNET], "wlan0", remembered="10.0.0.7")
    assert by_address[0] == ETHERNET
    # The player chose a VPN on purpose: it is theirs to choose.
    assert _names(rank_interfaces([WIFI, VPN], "wlan0", remembered="tun0")) == ["tun0", "wlan0"]
    # Gone (unplugged): the default route again.
    assert _names(rank_interfaces([WIFI, ETHERNET], "wlan0", remembered="eth1")) == [
        "wlan0",
        "enp3s0",
    ]


def test_virtual_ones_only_when_nothing_else_and_loopback_only_when_nothing_at_all() -> None:
    assert _names(rank_interfaces([LO, DOCKER, VPN])) == ["docker0", "tun0"]
    assert _names(rank_interfaces([LO])) == ["lo"]
    assert rank_interfaces([]) == []


def test_a_link_local_address_comes_after_a_real_one() -> None:
    stray = NetworkInterface("eth0", "169.254.3.4", 16)
    assert _names(rank_interfaces([stray, ETHERNET])) == ["enp3s0", "eth0"]


def test_windows_friendly_names_say_what_an_adapter_is() -> None:
    wifi = NetworkInterface("{4A1B-33}", "192.168.1.5", 24, "Wi-Fi")
    hyper_v = NetworkInterface("{77C2-01}", "172.29.160.1", 20, "vEthernet (WSL)")
    vpn = NetworkInterface("{9D00-AA}", "10.8.0.6", 24, "OpenVPN TAP-Windows6")
    assert rank_interfaces([hyper_v, vpn, wifi]) == [wifi]
    assert wifi.describe() == "Wi-Fi · 192.168.1.5"


def test_a_player_reads_which_network_it_is() -> None:
    assert WIFI.describe() == "Wi-Fi wlan0 · 192.168.1.20"
    assert ETHERNET.describe() == "Ethernet enp3s0 · 10.0.0.7"
    assert NetworkInterface("en0", "192.168.1.9").describe() == "en0 · 192.168.1.9"


def test_the_default_route_is_the_lowest_metric_one_that_is_up() -> None:
    assert parse_proc_route(ROUTES) == "tun0"
    assert parse_proc_route(ROUTES.replace("\t50\t", "\t900\t")) == "wlan0"
    assert parse_proc_route(ROUTES.splitlines()[0]) is None
    assert parse_proc_route("garbage\nx y z\n1 2 3 4 5 6 seven 8\n") is None


def test_the_routing_table_is_read_from_the_file_when_there_is_one(tmp_path: Path) -> None:
    routes = tmp_path / "route"
    routes.write_text(ROUTES, encoding="utf-8")
    assert default_route_interface([WIFI], routes) == "tun0"


def test_without_the_file_the_route_is_asked_of_the_kernel_without_sending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import net.interfaces as interfaces

    asked: list[str] = []

    def source(target: str) -> str | None:
        asked.append(target)
        return "192.168.1.20"

    monkeypatch.setattr(interfaces, "_route_source", source)
    assert default_route_interface([ETHERNET, WIFI], tmp_path / "absent") == "wlan0"
    assert asked == ["192.0.2.1"]  # a documentation address: a UDP connect sends nothing
    monkeypatch.setattr(interfaces, "_route_source", lambda target: None)
    assert default_route_interface([ETHERNET, WIFI], tmp_path / "absent") is None
