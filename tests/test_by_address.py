"""Joining by address, the pure parts: what a player may type, what the table's answer reads as,
and which of this laptop's addresses its lobby shows (the default route's first)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from nerts_lan.lan.advert import DEFAULT_PORT, PROTOCOL
from nerts_lan.lan.by_address import (
    AddressError,
    async_start_on_default_port,
    parse_address,
    shareable_addresses,
    table_from_described,
)
from net import Described
from net.interfaces import NetworkInterface, rank_interfaces


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("192.168.1.20:7777", ("192.168.1.20", 7777)),
        ("  192.168.1.20:40123 ", ("192.168.1.20", 40123)),
        ("192.168.1.20", ("192.168.1.20", DEFAULT_PORT)),
        ("anns-laptop.local", ("anns-laptop.local", DEFAULT_PORT)),
        ("anns-laptop:9000", ("anns-laptop", 9000)),
    ],
)
def test_an_address_or_a_host_name_with_or_without_its_port(
    typed: str, expected: tuple[str, int]
) -> None:
    assert parse_address(typed) == expected


@pytest.mark.parametrize(
    ("typed", "problem"),
    [
        ("", "type the host's address, like 192.168.1.20:7777"),
        ("192.168.1.20:", "the port after ':' must be a number from 1 to 65535"),
        ("192.168.1.20:70000", "the port after ':' must be a number from 1 to 65535"),
        ("192.168.1.20:http", "the port after ':' must be a number from 1 to 65535"),
        ("192.168.1.300", "'192.168.1.300' is not an IPv4 address or a host name"),
        ("ann's laptop", "is not an IPv4 address or a host name"),
        ("fe80::1", "is not an IPv4 address or a host name"),
        ("-bad-.local", "is not an IPv4 address or a host name"),
    ],
)
def test_what_is_no_address_is_said_in_plain_words(typed: str, problem: str) -> None:
    with pytest.raises(AddressError, match=problem.replace("(", r"\(")):
        parse_address(typed)


def test_a_description_reads_as_the_advert_would() -> None:
    properties = {
        "v": str(PROTOCOL),
        "name": "Kitchen",
        "host": "ann-1",
        "hostname": "Ann",
        "mode": "singles",
        "seats": "1/4",
        "state": "lobby",
        "code": "1",
    }
    table = table_from_described(Described("10.0.0.5", 7777, PROTOCOL, "ab12cd34", properties))
    assert table is not None
    assert (table.table_id, table.name, table.host_peer, table.host_name) == (
        "ab12cd34",
        "Kitchen",
        "ann-1",
        "Ann",
    )
    assert (table.address, table.port, table.needs_code, table.version) == (
        "10.0.0.5",
        7777,
        True,
        PROTOCOL,
    )
    assert table_from_described(Described("10.0.0.5", 7777, PROTOCOL, "x", {"v": "2"})) is None


def test_the_lobby_shows_every_usable_address_the_default_routes_first() -> None:
    found = [
        NetworkInterface("lo", "127.0.0.1", 8),
        NetworkInterface("docker0", "172.17.0.1", 16),
        NetworkInterface("eth0", "10.0.0.7"),
        NetworkInterface("wlan0", "192.168.1.20"),
        NetworkInterface("eth1", "169.254.3.4", 16),
    ]
    shown = shareable_addresses(None, lambda: rank_interfaces(found, "wlan0"))
    assert shown == ["192.168.1.20", "10.0.0.7"]  # not Docker's, loopback or link-local
    assert shareable_addresses(None, lambda: rank_interfaces(found, "eth0")) == [
        "10.0.0.7",
        "192.168.1.20",
    ]
    assert shareable_addresses("10.0.0.7", lambda: rank_interfaces(found, "wlan0")) == ["10.0.0.7"]


class _Node:
    """A node whose default port is taken (``taken``) or free."""

    def __init__(self, taken: bool) -> None:
        self.taken = taken

    async def async_start(self, host: str, port: int = 0) -> int:
        if port == DEFAULT_PORT and self.taken:
            raise OSError(98, "Address already in use")
        return port or 50123


def test_a_table_listens_on_the_default_port_when_it_is_free_else_on_any() -> None:
    assert asyncio.run(async_start_on_default_port(cast(Any, _Node(False)), "0.0.0.0")) == 7777
    assert asyncio.run(async_start_on_default_port(cast(Any, _Node(True)), "0.0.0.0")) == 50123
    assert asyncio.run(async_start_on_default_port(cast(Any, _Node(False)), "127.0.0.1")) == 50123
