"""The address policy in memory: what gossip may make us dial, and our networks' lookup."""

from __future__ import annotations

import ipaddress
from typing import Any, cast

import pytest

from net._codec import Broken
from net._mesh.addresses import (
    MAX_GOSSIP,
    GossipEntry,
    LocalNetworks,
    is_ipv4,
    parse_gossip,
    parse_listen_address,
    reachable_listen,
)

HOME = ipaddress.IPv4Network("192.168.1.0/24")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_only_hosts_on_our_networks_may_be_dialed() -> None:
    networks = LocalNetworks(lambda: [HOME], clock=FakeClock())
    assert networks.may_dial("192.168.1.20")
    assert not networks.may_dial("192.168.2.20")
    assert not networks.may_dial("8.8.8.8")


def test_the_networks_are_looked_up_again_after_their_time_to_live() -> None:
    clock, lookups = FakeClock(), []

    def lookup() -> list[ipaddress.IPv4Network]:
        lookups.append(clock.now)
        return [HOME] if len(lookups) == 1 else [ipaddress.IPv4Network("10.0.0.0/8")]

    networks = LocalNetworks(lookup, clock=clock, ttl=10.0)
    assert networks.may_dial("192.168.1.1")
    clock.now = 9.9
    assert networks.may_dial("192.168.1.1")  # cached: the laptop has not looked again
    clock.now = 10.0
    assert not networks.may_dial("192.168.1.1") and networks.may_dial("10.1.2.3")
    assert lookups == [0.0, 10.0]


def test_the_operating_system_lookup_includes_loopback() -> None:
    assert LocalNetworks().may_dial("127.0.0.1")


def test_gossip_yields_usable_entries_and_skips_ourselves_and_nonsense() -> None:
    book = [
        ["b", "192.168.1.2", 4000],
        ["me", "192.168.1.3", 4000],  # about us
        ["c", "example.org", 4000],  # not an IPv4 address
        ["d", "192.168.1.4", 0],  # not a port
        ["e", "192.168.1.5", 65536],
    ]
    assert list(parse_gossip(book, "a", "me")) == [GossipEntry("b", "192.168.1.2", 4000)]


def test_gossip_reads_at_most_its_limit() -> None:
    book = [[f"p{i}", "10.0.0.1", 1000 + i] for i in range(MAX_GOSSIP + 5)]
    assert len(list(parse_gossip(book, "a", "me"))) == MAX_GOSSIP


@pytest.mark.parametrize(
    "item", [["b", "10.0.0.1"], ["b", "10.0.0.1", "80"], [1, "10.0.0.1", 80], ["b", "x", True]]
)
def test_a_malformed_gossip_entry_breaks_the_link(item: list[object]) -> None:
    entries = parse_gossip([["ok", "10.0.0.1", 80], item], "a", "me")
    assert next(entries) == GossipEntry("ok", "10.0.0.1", 80)  # entries before it stand
    with pytest.raises(Broken, match="malformed address list from a"):
        next(entries)


def test_a_listening_address_is_an_ipv4_host_and_a_port() -> None:
    assert parse_listen_address(None, "a") is None
    assert parse_listen_address(["10.0.0.1", 80], "a") == ("10.0.0.1", 80)
    for bad in (["10.0.0.1"], ["::1", 80], ["10.0.0.1", 0], ["10.0.0.1", True], "10.0.0.1:80"):
        with pytest.raises(Broken, match="hello field 'listen' from a is malformed"):
            parse_listen_address(bad, "a")


def test_ipv4_means_a_dotted_quad() -> None:
    assert is_ipv4("10.0.0.1")
    assert not is_ipv4("10.1") and not is_ipv4("::1") and not is_ipv4("host")


class _Writer:
    """The one thing ``reachable_listen`` asks of a connection's writer."""

    def __init__(self, sockname: object) -> None:
        self.sockname = sockname

    def get_extra_info(self, name: str) -> object:
        assert name == "sockname"
        return self.sockname


def test_a_listener_on_every_interface_names_the_address_each_connection_runs_from() -> None:
    def writer(sockname: object) -> Any:
        return cast(Any, _Writer(sockname))

    assert reachable_listen(("10.0.0.5", 7777), writer(("10.0.0.5", 7777))) == ("10.0.0.5", 7777)
    assert reachable_listen(("0.0.0.0", 7777), writer(("10.0.0.5", 51000))) == ("10.0.0.5", 7777)
    assert reachable_listen(("0.0.0.0", 7777), writer(None)) is None  # never 0.0.0.0
    assert reachable_listen(None, writer(("10.0.0.5", 51000))) is None
