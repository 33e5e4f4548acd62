"""Joining a table by its address, for networks where mDNS finds nothing (hotels, campuses,
offices and some home routers drop multicast).

The host's lobby shows the addresses others can type (``shareable_addresses``, the likely Wi-Fi
one first) and its port; a joiner types ``192.168.1.20:7777`` or a host name (``parse_address``:
the port defaults to ``DEFAULT_PORT``), and ``async_table_at`` asks that address which table is
there (``net.async_describe``: the host answers with the properties of its mDNS advert, which
``table_from_advert`` reads as ever). Joining then goes on as after mDNS, the table's code
checked by the handshake, and the other members are reached through the addresses the members
gossip. Every failure is an ``AddressError`` whose text a player can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from nerts_lan.lan.advert import DEFAULT_PORT, PROTOCOL, SERVICE_TYPE, TableInfo, table_from_advert
from net import (
    Advert,
    Described,
    DescribeError,
    ForeignAnswer,
    NetworkInterface,
    NoAnswer,
    NothingDescribed,
    NothingListening,
    UnknownHost,
    async_describe,
    usable_interfaces,
)

if TYPE_CHECKING:
    from net import Node

__all__ = [
    "LOOK_UP_TIMEOUT",
    "AddressError",
    "async_start_on_default_port",
    "async_table_at",
    "parse_address",
    "shareable_addresses",
    "table_at",
    "table_from_described",
]

LOOK_UP_TIMEOUT = 3.0
"""Seconds for the host name lookup, and then for the table to answer."""
EXAMPLE = f"192.168.1.20:{DEFAULT_PORT}"


class AddressError(ValueError):
    """An address that leads to no table we can join, in words for the player."""


def parse_address(text: str) -> tuple[str, int]:
    """The host (an IPv4 address or a host name) and port of what a player typed: ``HOST`` or
    ``HOST:PORT`` (the port defaults to ``DEFAULT_PORT``); ``AddressError`` when it is not one."""
    typed = text.strip()
    if not typed:
        raise AddressError(f"type the host's address, like {EXAMPLE}")
    if typed.count(":") > 1 or typed.startswith("["):
        raise AddressError(
            f"{typed!r} is not an IPv4 address or a host name: type one like {EXAMPLE}"
        )
    host, colon, port_text = typed.partition(":")
    if not colon:
        port = DEFAULT_PORT
    elif port_text.isdigit() and 0 < int(port_text) < 65536:
        port = int(port_text)
    else:
        raise AddressError(f"the port after ':' must be a number from 1 to 65535 (as in {EXAMPLE})")
    if not _is_host(host):
        raise AddressError(
            f"{host!r} is not an IPv4 address or a host name: type one like {EXAMPLE}"
        )
    return host, port


async def async_table_at(host: str, port: int, timeout: float = LOOK_UP_TIMEOUT) -> TableInfo:
    """The table listening at ``host:port`` (as its host describes it); ``AddressError``
    saying why there is none. Any address the player typed may be asked: the rule that we dial
    only hosts on our own networks is for the addresses peers gossip, not for this one."""
    where = f"{host}:{port}"
    try:
        described = await async_describe(host, port, timeout)
    except DescribeError as error:
        raise AddressError(_problem_text(error, host, where)) from None
    table = table_from_described(described)
    if table is None:
        raise AddressError(f"{where} is not a nerts-lan table")
    if table.version != PROTOCOL:
        raise AddressError(
            f"the table at {where} runs another version of nerts-lan: update every laptop"
        )
    return table


async def async_start_on_default_port(node: Node, host: str) -> int:
    """Start ``node`` listening on ``host`` at ``DEFAULT_PORT`` when it is free (a player joining
    by address may then leave the port out), else at any free port (another table on this
    laptop has it; the lobby shows the port); the port. On the loopback, at any free port: no
    other laptop types that address, and the many tables of tests and demos on one machine
    would otherwise take turns at one port (a peer redialing a table that left it would reach
    another table)."""
    if host.startswith("127."):
        return await node.async_start(host)
    try:
        return await node.async_start(host, DEFAULT_PORT)
    except OSError:  # taken; if the address itself is the problem, this fails again and says so
        return await node.async_start(host)


def table_at(host: str, port: int, timeout: float = LOOK_UP_TIMEOUT) -> TableInfo:
    """``async_table_at`` for a caller outside any event loop (headless ``join --address``)."""
    return asyncio.run(async_table_at(host, port, timeout))


def table_from_described(described: Described) -> TableInfo | None:
    """The table a describe answer tells of (read like its mDNS advert), None if none."""
    properties = dict(described.properties)
    advert = Advert(
        SERVICE_TYPE,
        described.table,
        properties.get("name", described.table)[:40],
        described.port,
        properties,
        (described.address,),
    )
    return table_from_advert(advert)


def shareable_addresses(
    interface: str | None = None,
    ranked: Callable[[], Iterable[NetworkInterface]] = usable_interfaces,
) -> list[str]:
    """The IPv4 addresses others on the LAN may type to reach this laptop: ``interface`` alone
    when the game uses only that one, else those of the usable interfaces as ``ranked`` (the
    ranking of ``net.interfaces``: the default route's first, Docker, VPN and virtual bridges
    left out) gives them, less loopback and link-local ones, which no one else can type."""
    if interface is not None and interface not in ("0.0.0.0", ""):
        return [interface]
    found: list[str] = []
    for candidate in ranked():
        shown = candidate.kind != "loopback" and not candidate.link_local
        if shown and candidate.address not in found:
            found.append(candidate.address)
    return found


# --- helpers ------------------------------------------------------------------------------------


def _problem_text(error: DescribeError, host: str, where: str) -> str:
    if isinstance(error, UnknownHost):
        return f"cannot find {host!r} on the network: check the name, or type its address"
    if isinstance(error, NothingListening):
        return f"nothing is listening at {where}: check the address and port the host's lobby shows"
    if isinstance(error, NoAnswer):
        return f"{where} did not answer: is it a nerts-lan table? check the address"
    if isinstance(error, NothingDescribed):
        return f"{where} is at a table but not its host: type the address the host's lobby shows"
    if isinstance(error, ForeignAnswer):
        return f"{where} is not a nerts-lan table"
    return str(error)


def _is_host(text: str) -> bool:
    """An IPv4 address (dotted quad) or a host name of letters, digits, dashes and dots."""
    if not text or len(text) > 253:
        return False
    if all(part.isdigit() for part in text.split(".")):
        with contextlib.suppress(ValueError):
            ipaddress.IPv4Address(text)
            return True
        return False
    labels = text.rstrip(".").split(".")
    return all(
        0 < len(label) <= 63
        and label[0] != "-"
        and label[-1] != "-"
        and all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in label)
        for label in labels
    )
