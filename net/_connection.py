"""One TCP connection of the mesh, framed: reading and writing frames (tagged once a coded table's
handshake is done), and that handshake's SPAKE2 exchange and key confirmation.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import socket
from typing import Any

import spake2  # type: ignore[import-untyped]

from ._codec import (
    HEADER,
    KIND_CONFIRM,
    KIND_KEY_EXCHANGE,
    Broken,
    Refused,
    UndecodableError,
    UnpackLimits,
    pack_body,
    unpack_untrusted,
)
from ._handshake import (
    CONFIRMATION_SIZE,
    HANDSHAKE_TIMEOUT,
    KEY_EXCHANGE_ID,
    KEY_EXCHANGE_SIZE,
    TAG_SIZE,
    WRONG_CODE,
    CodeCheckGate,
    FrameTags,
    SessionKeys,
    parse_handshake_frame,
)

__all__ = ["Connection", "authenticate"]

_MAX_ITEMS = 64
"""Most items in one array or map of a frame body (ours have a few)."""


class Connection:
    """A framed TCP connection; ``who`` names the other end in problems."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        who: str,
        max_frame: int,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.who = who
        self.max_frame = max_frame
        self.limits = UnpackLimits(max_frame, max_frame, _MAX_ITEMS, _MAX_ITEMS)
        self.outgoing_tags: FrameTags | None = None
        """The tags of what we write, once authenticated."""
        self.incoming_tags: FrameTags | None = None
        """The tags of what the other end writes, once authenticated."""
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def write(self, body: list[Any]) -> bytes:
        """Write one frame (with its tag on an authenticated connection); the body written."""
        data = pack_body(body)
        tags = self.outgoing_tags
        if tags is None:
            self.writer.write(HEADER.pack(len(data)) + data)
        else:
            self.writer.write(HEADER.pack(len(data) + TAG_SIZE) + data + tags.next_tag(data))
        return data

    async def read_raw(self) -> bytes:
        """The body of the next frame, its tag checked on an authenticated connection."""
        header = await self.reader.readexactly(HEADER.size)
        (length,) = HEADER.unpack(header)
        tags = self.incoming_tags
        limit = self.max_frame if tags is None else self.max_frame + TAG_SIZE
        if length > limit:
            raise Broken(f"frame of {length} bytes from {self.who} is over the {limit} byte limit")
        raw = await self.reader.readexactly(length)
        return raw if tags is None else tags.check(raw, self.who)

    async def read_handshake_raw(self) -> bytes:
        """The next (untagged) frame of the handshake, within the handshake's time limit."""
        return await asyncio.wait_for(self.read_raw(), HANDSHAKE_TIMEOUT)

    def decode(self, raw: bytes) -> Any:
        """The msgpack value of a frame body; ``Broken`` if it is not one within our limits."""
        try:
            return unpack_untrusted(raw, self.limits)
        except UndecodableError as error:
            raise Broken(f"undecodable frame from {self.who}: {error}") from None

    def is_closing(self) -> bool:
        return self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()

    def unsent(self) -> int:
        """Bytes written but still held by asyncio (the kernel's buffer is full)."""
        return int(self.writer.transport.get_write_buffer_size())

    def abort(self) -> None:
        """Drop the connection at once, as a network failure would."""
        self.writer.transport.abort()

    async def read_handshake_frame(self, kind: int, size: int) -> bytes:
        """The payload of the next handshake frame, of ``kind`` and ``size`` bytes."""
        body = self.decode(await self.read_handshake_raw())
        return parse_handshake_frame(body, self.who, kind, size)


async def authenticate(
    connection: Connection,
    code: str,
    table: str,
    gate: CodeCheckGate,
    dialed: bool,
    hellos: tuple[bytes, bytes],
) -> None:
    """Prove both ends know the table code, then tag every frame both ways.

    ``hellos``: the dialer's and the listener's hello bodies, bound into the keys. The dialer
    confirms first and the listener answers only a right confirmation, so a guesser who dials
    learns nothing before its guess is checked, and every check waits its turn at ``gate``."""
    loop = asyncio.get_running_loop()
    exchange = spake2.SPAKE2_Symmetric(code.encode(), idSymmetric=KEY_EXCHANGE_ID + table.encode())
    # Pure-Python curve arithmetic (about 10 ms a step): off the loop, so other links flow.
    outbound = await loop.run_in_executor(None, exchange.start)
    connection.write([KIND_KEY_EXCHANGE, outbound])
    inbound = await connection.read_handshake_frame(KIND_KEY_EXCHANGE, KEY_EXCHANGE_SIZE)
    try:
        shared = await loop.run_in_executor(None, exchange.finish, inbound)
    except Exception:  # spake2 raises several types for a bad point or a reflected message
        raise Broken(f"bad key exchange message from {connection.who}") from None
    keys = SessionKeys.derive(shared, hellos[0], hellos[1], dialed)
    if dialed:
        await _confirm_first(connection, gate, keys)
    else:
        await _confirm_second(connection, gate, keys)
    connection.outgoing_tags = FrameTags(keys.outgoing)
    connection.incoming_tags = FrameTags(keys.incoming)


async def code_check_turn(gate: CodeCheckGate) -> None:
    """Wait until no failed check holds the code checks back; a handshake that would wait past
    its time limit is given up. No await may come between this and the check itself: then
    whoever is let in first and fails holds back the others let in at the same time."""
    give_up_at = gate.now() + HANDSHAKE_TIMEOUT
    while (wait := gate.wait()) > 0:
        if gate.too_late(give_up_at):
            raise asyncio.TimeoutError
        await asyncio.sleep(wait)


async def _confirm_first(connection: Connection, gate: CodeCheckGate, keys: SessionKeys) -> None:
    await code_check_turn(gate)
    connection.write([KIND_CONFIRM, keys.my_confirmation])
    try:
        answer = await connection.read_handshake_frame(KIND_CONFIRM, CONFIRMATION_SIZE)
        if not hmac.compare_digest(answer, keys.their_confirmation):
            raise Refused(WRONG_CODE)
    except Exception:
        # Our confirmation answered one guess of whoever listens there: hold the other checks
        # back as a listener does (but report this failure at once).
        gate.hold()
        raise


async def _confirm_second(connection: Connection, gate: CodeCheckGate, keys: SessionKeys) -> None:
    answer = await connection.read_handshake_frame(KIND_CONFIRM, CONFIRMATION_SIZE)
    await code_check_turn(gate)
    if not hmac.compare_digest(answer, keys.their_confirmation):
        gate.hold()
        await asyncio.sleep(gate.penalty)  # the guesser waits for its answer too
        raise Refused(WRONG_CODE)
    connection.write([KIND_CONFIRM, keys.my_confirmation])
