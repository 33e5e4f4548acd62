"""A stranger's one question before any handshake: which table is here?

A network that drops multicast hides every mDNS advert, so a player types the host's address
instead, and the game needs to know what listens there before it can join (the table, whether
it needs a code). A connection we accept may therefore open, instead of a hello, with a describe
request (exactly the frame ``[KIND_DESCRIBE, DESCRIBE_VERSION]``). The listener answers with what
its application set (``Description.set``: a few opaque text properties, the ones a host puts in
its mDNS advert) after the protocol and the table of its hello, and closes the connection. It
says nothing else: no peer id, name or address beyond what the application chose to publish, no
code (a coded table's code is checked only by the handshake), and a listener with nothing set
refuses with ``NOTHING_DESCRIBED``.

The request is a stranger's connection like any other (the stranger pool, its share per address
and its deadline), and each source address may ask only so often (a token bucket per address,
as for key exchanges): past that the connection is closed without a word.

``async_describe`` is the asking side: it resolves a host name to an IPv4 address, dials, asks,
reads the bounded answer within a time limit, and says with a ``DescribeError`` what went wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from net._codec import HEADER, KIND_DESCRIBE, KIND_REFUSE, MAX_TEXT, Broken, is_refusal, pack_body
from net._mesh.connection import Connection
from net._mesh.parts import Shed
from net._mesh.strangers import HandshakeBudgets

__all__ = [
    "DESCRIBE_REQUEST",
    "DESCRIBE_TIMEOUT",
    "DESCRIBE_VERSION",
    "MAX_PROPERTIES",
    "MAX_PROPERTY_KEY",
    "MAX_PROPERTY_VALUE",
    "NOTHING_DESCRIBED",
    "DescribeError",
    "Described",
    "Description",
    "ForeignAnswer",
    "NoAnswer",
    "NothingDescribed",
    "NothingListening",
    "UnknownHost",
    "async_describe",
]

DESCRIBE_VERSION = 1
DESCRIBE_REQUEST = pack_body([KIND_DESCRIBE, DESCRIBE_VERSION])
"""The whole body of a describe request, compared byte for byte."""
NOTHING_DESCRIBED = "nothing to describe here"
"""The refusal of a listener whose application set no description (yet, or any more)."""
MAX_PROPERTIES = 16
MAX_PROPERTY_KEY = 9
"""Longest property name (as in an mDNS TXT record of ``net.discovery``)."""
MAX_PROPERTY_VALUE = 200
"""Longest property value, in UTF-8 bytes (``net.discovery.MAX_PROPERTY_LENGTH``)."""
MAX_ANSWER = 8192
"""Largest answer a describing side reads, in bytes (16 properties of 200 bytes fit)."""
DESCRIBE_TIMEOUT = 3.0
"""Seconds ``async_describe`` gives the host name lookup, and then the dial and the answer."""
DESCRIBES_PER_SECOND = 2.0
DESCRIBE_BURST = 10.0
"""How often one source address may ask: a burst, then so many a second."""


class Description:
    """What a mesh answers a describe request: its hello's protocol and table, and the
    properties its application set (None: nothing, and the request is refused)."""

    def __init__(
        self,
        protocol: int,
        table: str,
        rate: float = DESCRIBES_PER_SECOND,
        burst: float = DESCRIBE_BURST,
    ) -> None:
        self.protocol = protocol
        self.table = table
        self._properties: dict[str, str] | None = None
        self._budgets = HandshakeBudgets(rate, burst)

    @property
    def properties(self) -> dict[str, str] | None:
        return None if self._properties is None else dict(self._properties)

    def set(self, properties: Mapping[str, str] | None) -> None:
        """Answer with ``properties`` from now on (None: refuse); ``ValueError`` if they are
        more or longer than a describing side reads (see ``check_properties``)."""
        if properties is not None:
            check_properties(properties)
        self._properties = None if properties is None else dict(properties)

    def answer(self, address: str, now: float) -> list[Any] | None:
        """The body to answer a request from ``address`` with; None if that address asks too
        often (close without a word)."""
        if not self._budgets.allow(address, now):
            return None
        if self._properties is None:
            return [KIND_REFUSE, NOTHING_DESCRIBED]
        return [KIND_DESCRIBE, self.protocol, self.table, dict(self._properties)]

    async def read_opening(self, connection: Connection, listening: bool) -> bytes:
        """The first frame of a connection (a hello); on a connection we accepted
        (``listening``) that asks to be described instead, answer it and raise ``Answered``."""
        raw = await connection.read_handshake_raw()
        if not listening or raw != DESCRIBE_REQUEST:
            return raw
        body = self.answer(connection.address, asyncio.get_running_loop().time())
        if body is not None:
            connection.write(body)
        raise Answered


class Answered(Shed):
    """A describe request was answered (or shed): close the connection, nothing more to say."""


def check_properties(properties: Mapping[str, str]) -> None:
    """``ValueError`` unless ``properties`` are at most ``MAX_PROPERTIES`` text pairs, each name
    1 to ``MAX_PROPERTY_KEY`` characters and each value at most ``MAX_PROPERTY_VALUE`` bytes."""
    if len(properties) > MAX_PROPERTIES:
        raise ValueError(f"at most {MAX_PROPERTIES} properties describe a listener")
    for key, value in properties.items():
        if not isinstance(key, str) or not 0 < len(key) <= MAX_PROPERTY_KEY:
            raise ValueError(f"bad property name {key!r}")
        if not isinstance(value, str) or len(value.encode()) > MAX_PROPERTY_VALUE:
            raise ValueError(f"property {key!r} is too long")


@dataclass(frozen=True)
class Described:
    """What a listener said it is: where it was reached, its protocol and table, and the
    properties its application set."""

    address: str
    """The IPv4 address dialed (the host name resolved)."""
    port: int
    protocol: int
    table: str
    properties: Mapping[str, str] = field(default_factory=dict)


class DescribeError(Exception):
    """Why a listener could not be described; the subclass says which kind of wrong, the text
    says it in words (with the address)."""


class UnknownHost(DescribeError):
    """The host name does not resolve to an IPv4 address."""


class NothingListening(DescribeError):
    """Nobody accepts connections at that address and port (refused or unreachable)."""


class NoAnswer(DescribeError):
    """It accepted the connection and then said nothing in time, or closed it unanswered."""


class NothingDescribed(DescribeError):
    """A mesh of ours, whose application describes nothing there now."""


class ForeignAnswer(DescribeError):
    """Something answered that is not a description (another program, an older version)."""


async def async_describe(host: str, port: int, timeout: float = DESCRIBE_TIMEOUT) -> Described:
    """Ask ``host:port`` which table is there (``host``: an IPv4 address or a host name); a
    ``DescribeError`` subclass when it cannot say. Any address the user typed may be asked:
    this is not the dial rule for addresses peers gossip (``net._mesh.addresses.LocalNetworks``)."""
    where = f"{host}:{port}"
    address = await _resolve(host, port, timeout)
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(address, port), timeout=timeout
        )
    except asyncio.TimeoutError:
        raise NoAnswer(f"{where} did not answer within {timeout:g} s") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise NothingListening(f"nothing is listening at {where} ({reason})") from None
    connection = Connection(reader, writer, where, MAX_ANSWER)
    try:
        writer.write(HEADER.pack(len(DESCRIBE_REQUEST)) + DESCRIBE_REQUEST)
        try:
            raw = await asyncio.wait_for(connection.read_raw(), timeout=timeout)
        except asyncio.TimeoutError:
            raise NoAnswer(f"{where} did not answer within {timeout:g} s") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            raise NoAnswer(f"{where} closed the connection without an answer") from None
        except Broken:
            raise ForeignAnswer(f"{where} answered something else than a table") from None
        return _parse_answer(connection, raw, address, port)
    finally:
        connection.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), timeout=1.0)


# --- helpers ---------------------------------------------------------------------------------


async def _resolve(host: str, port: int, timeout: float) -> str:
    """The first IPv4 address of ``host``; ``UnknownHost`` if it has none."""
    loop = asyncio.get_running_loop()
    try:
        found = await asyncio.wait_for(
            loop.getaddrinfo(host, port, family=socket.AF_INET, type=socket.SOCK_STREAM),
            timeout=timeout,
        )
    except (OSError, UnicodeError, asyncio.TimeoutError):
        found = []
    for _, _, _, _, sockaddr in found:
        return str(sockaddr[0])
    raise UnknownHost(f"cannot find the host {host!r} on the network")


def _parse_answer(connection: Connection, raw: bytes, address: str, port: int) -> Described:
    where = connection.who
    foreign = ForeignAnswer(f"{where} answered something else than a table")
    try:
        body = connection.decode(raw)
    except Broken:
        raise foreign from None
    if is_refusal(body):
        if body[1] == NOTHING_DESCRIBED:
            raise NothingDescribed(f"{where} describes no table now")
        raise ForeignAnswer(f"{where} refused the question: {body[1][:MAX_TEXT]}")
    if not (isinstance(body, list) and len(body) == 4 and body[0] == KIND_DESCRIBE):
        raise foreign
    _, protocol, table, properties = body
    if (
        type(protocol) is not int
        or not isinstance(table, str)
        or not 0 < len(table) <= MAX_TEXT
        or not isinstance(properties, dict)
    ):
        raise foreign
    try:
        check_properties(properties)
    except ValueError:
        raise foreign from None
    return Described(address, port, protocol, table, properties)
