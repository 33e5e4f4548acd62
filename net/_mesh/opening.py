"""The opening of each connection of a mesh: the hellos, the code check and the key proofs in
the order the handshake takes them, and the vetting of whoever answered. See "The handshake" in
docs/mesh.md; the pure parts are ``net._mesh.handshake``, the socket's side
``net._mesh.connection``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import NamedTuple

from net._codec import Refused
from net._mesh.connection import Connection, authenticate, prove_key
from net._mesh.describe import Description
from net._mesh.handshake import (
    Hello,
    check_hello,
    check_veiled_hello,
    parse_hello,
    veiled_hello_body,
)
from net._mesh.parts import MeshConfig, MeshLink, MeshListener, Opened, Shed
from net._mesh.roaming import Roaming
from net._mesh.strangers import CodeCheckGates, HandshakeBudgets, StrangerPool

__all__ = ["DUPLICATE", "HandshakeParts", "Handshakes"]

DUPLICATE = "duplicate connection"
"""The refusal of a connection that loses to the pair's other one (neither end reports it)."""


class HandshakeParts(NamedTuple):
    """What of its mesh the handshakes use: the description a stranger may ask for, roaming (our
    hello's listening address, the replace rule), the stranger pool, the links (read) and
    ``link``, which gives the link to a peer (made if need be)."""

    description: Description
    roaming: Roaming
    strangers: StrangerPool[Connection]
    links: Mapping[str, MeshLink]
    link: Callable[[str], MeshLink]


class Handshakes:
    """Opens each connection of one mesh (`shake`), and holds what spaces the code checks and key
    exchanges of each source address out."""

    def __init__(
        self, config: MeshConfig, me: Hello, listener: MeshListener, parts: HandshakeParts
    ) -> None:
        self._config = config
        self._me = me
        self._listener = listener
        self._description = parts.description
        self._roaming = parts.roaming
        self._strangers = parts.strangers
        self._links = parts.links
        self._link = parts.link
        self._gates = CodeCheckGates(config.wrong_code_delay, _loop_time)
        self._budgets = HandshakeBudgets(config.handshakes_per_second, config.handshake_burst)

    async def shake(
        self, connection: Connection, expected: str | None
    ) -> tuple[Opened, bytes | None]:
        """The handshake; and, from a peer this mesh does not know, its first frame (read before
        it is linked, so that idle hellos never get as far)."""
        if expected is not None:
            return await self._handshake(connection, expected), None
        # A connection we accepted may be a stranger's: it has a deadline to link.
        alarm = connection.deadline(self._config.stranger_timeout)
        try:
            opened = await self._handshake(connection, expected)
            if self._is_known(opened.hello.peer):
                self._strangers.release(connection)
                return opened, None
            return opened, await connection.read_raw()
        finally:
            alarm.cancel()

    async def _handshake(self, connection: Connection, expected: str | None) -> Opened:
        """Exchange hellos (the dialer, ``expected`` set, first) and, at a coded table, prove the
        code; ``Refused`` or ``Broken`` when the two may not link."""
        if expected is not None and self._config.table_code is not None:
            return await self._dial_coded(connection, expected)
        mine = self._roaming.send_hello(connection, self._link(expected)) if expected else b""
        raw = await self._description.read_opening(connection, listening=expected is None)
        received = parse_hello(connection.decode(raw), connection.who)
        resume = check_hello(received, self._me, self._config.table_code is not None)
        hello = received.hello
        if expected is not None:
            # Proven first, vetted after: the proof lets other connections run.
            await prove_key(connection, self._config.key, hello, (mine, raw), dialed=True)
            self._vet(hello, expected)
            return Opened(hello, resume, received.listen)
        known = self._is_known(hello.peer)
        if known:
            self._strangers.shield(connection)
        self._vet(hello, expected)
        if self._config.table_code is not None:
            if not self._budgets.allow(connection.address, _loop_time()):
                raise Shed
            # Who listens here, under what name and where, is told only to a dialer who proved
            # the code: first a veiled hello, then the whole one as the first tagged frame.
            veiled = connection.write(veiled_hello_body(self._me))
            gate = self._gates.of(connection.address, known)
            code = self._config.table_code
            await authenticate(connection, code, self._me.table, gate, False, (raw, veiled))
        mine = self._roaming.send_hello(connection, self._links.get(hello.peer))
        await prove_key(connection, self._config.key, hello, (raw, mine), dialed=False)
        # The key exchange and the proofs let other connections run: the pair may have linked
        # meanwhile.
        if self._roaming.existing_connection_wins(hello.peer):
            raise Refused(DUPLICATE)
        return Opened(hello, resume, received.listen)

    async def _dial_coded(self, connection: Connection, expected: str) -> Opened:
        """The dialer's side of a coded handshake: the listener's veiled hello, the code, then
        its whole hello in a tagged frame."""
        assert self._config.table_code is not None
        dialer_hello = self._roaming.send_hello(connection, self._link(expected))
        raw = await connection.read_handshake_raw()
        check_veiled_hello(connection.decode(raw), self._me, connection.who)
        gate = self._gates.of(connection.address, known=True)
        code = self._config.table_code
        await authenticate(connection, code, self._me.table, gate, True, (dialer_hello, raw))
        whole = await connection.read_handshake_raw()
        received = parse_hello(connection.decode(whole), connection.who)
        resume = check_hello(received, self._me, coded=True)
        await prove_key(connection, self._config.key, received.hello, (dialer_hello, whole), True)
        self._vet(received.hello, expected)
        return Opened(received.hello, resume, received.listen)

    def _vet(self, hello: Hello, expected: str | None) -> None:
        """``Refused`` if the application refuses ``hello``, it is not the peer we dialed, or
        the pair already has a connection that wins over this one."""
        refusal = self._listener.refusal(hello)
        if refusal is not None:
            raise Refused(refusal)
        if expected is not None and hello.peer != expected:
            raise Refused(f"expected peer {expected!r} but {hello.peer!r} answered")
        if self._roaming.existing_connection_wins(hello.peer):
            raise Refused(DUPLICATE)

    def _is_known(self, peer: str) -> bool:
        link = self._links.get(peer)
        return link is not None and link.known


def _loop_time() -> float:
    return asyncio.get_running_loop().time()
