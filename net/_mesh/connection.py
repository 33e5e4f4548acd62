"""One TCP connection of the mesh, framed: reading and writing frames (tagged once a coded table's
handshake is done), and that handshake's SPAKE2 exchange and key confirmation.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import socket
import time
from collections.abc import Sequence
from typing import Any

import spake2  # type: ignore[import-untyped]

from net._codec import (
    HEADER,
    KIND_CONFIRM,
    KIND_KEY_EXCHANGE,
    KIND_PROOF,
    Broken,
    Refused,
    UndecodableError,
    UnpackLimits,
    pack_body,
    unpack_untrusted,
)
from net._identity import SIGNATURE_SIZE, PeerKey
from net._mesh.datagrams import datagram_secret
from net._mesh.handshake import (
    CONFIRMATION_SIZE,
    HANDSHAKE_TIMEOUT,
    KEY_EXCHANGE_ID,
    KEY_EXCHANGE_SIZE,
    TAG_SIZE,
    WRONG_CODE,
    FrameTags,
    Hello,
    SessionKeys,
    check_proof,
    parse_handshake_frame,
    proof_message,
)
from net._mesh.strangers import SourceGate

__all__ = ["Connection", "authenticate", "cancel_within", "prove_key"]

log = logging.getLogger("net._mesh.mesh")  # closing is the mesh's story

_MAX_ITEMS = 64
"""Most items in one array or map of a frame body (ours have a few)."""
FRAME_TIMEOUT = 30.0
"""Seconds a frame may take to arrive once its first byte has: the largest (4 MiB) over a slow
Wi-Fi takes a few. A peer that trickles a frame, or stops in the middle of one, is cut off;
between frames a link may stay silent as long as it likes."""


class Connection:
    """A framed TCP connection; ``who`` names the other end in problems."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        who: str,
        max_frame: int,
        frame_timeout: float = FRAME_TIMEOUT,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.who = who
        self.max_frame = max_frame
        self.frame_timeout = frame_timeout
        self.timed_out = False
        """A deadline dropped this connection."""
        self._frame_began: float | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self.limits = UnpackLimits(max_frame, max_frame, _MAX_ITEMS, _MAX_ITEMS)
        self.outgoing_tags: FrameTags | None = None
        """The tags of what we write, once authenticated."""
        self.incoming_tags: FrameTags | None = None
        """The tags of what the other end writes, once authenticated."""
        self.binding = b""
        """What peer key proofs on this connection sign besides the hellos: a value of the
        session key once authenticated (``SessionKeys.binding``)."""
        self.datagram_secrets = (b"", b"")
        """The secrets this connection's datagram keys are mixed with, ours and the other
        end's (empty until authenticated: an open table's announced keys are used as they are)."""
        peer = writer.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) else "unknown"
        """The other end's IP address: what strangers are charged to."""
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def write(self, body: list[Any]) -> bytes:
        """Write one frame (with its tag on an authenticated connection); the body written."""
        data = pack_body(body)
        if self.writer.transport.is_closing():
            # Lost or closing: its reader ends the link soon, and the link resends what was not
            # acknowledged. Writing on would only make asyncio log each write as a failure.
            return data
        tags = self.outgoing_tags
        if tags is None:
            self.writer.write(HEADER.pack(len(data)) + data)
        else:
            self.writer.write(HEADER.pack(len(data) + TAG_SIZE) + data + tags.next_tag(data))
        return data

    async def read_raw(self) -> bytes:
        """The body of the next frame, its tag checked on an authenticated connection; ``Broken``
        if the frame, once begun, takes over ``frame_timeout`` seconds to arrive."""
        # Waiting for a frame has no time limit (an idle link stays open); a stall within its
        # header is an idle link too. From its length on, the frame has frame_timeout to arrive.
        # Not a timer per frame (thousands a second): a watchdog looks at when this one began.
        header = await self.reader.readexactly(HEADER.size)
        self._frame_began = time.monotonic()
        if self._watchdog is None:
            self._watch()
        try:
            (length,) = HEADER.unpack(header)
            tags = self.incoming_tags
            limit = self.max_frame if tags is None else self.max_frame + TAG_SIZE
            if length > limit:
                who = self.who
                raise Broken(f"frame of {length} bytes from {who} is over the {limit} byte limit")
            raw = await self.reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError):
            if self.timed_out:
                late = f"a frame from {self.who} took over {self.frame_timeout:g} s"
                raise Broken(late) from None
            raise
        finally:
            self._frame_began = None
        return raw if tags is None else tags.check(raw, self.who)

    def deadline(self, seconds: float) -> asyncio.TimerHandle:
        """Drop the connection in ``seconds`` (setting ``timed_out``) unless the handle returned
        is cancelled first: a read waiting then fails at once."""
        return asyncio.get_running_loop().call_later(seconds, self._time_out)

    def _watch(self) -> None:
        """Every quarter of ``frame_timeout``: drop the connection if a frame began too long ago."""
        began = self._frame_began
        if began is not None and time.monotonic() - began > self.frame_timeout:
            self._time_out()
        if self.is_closing():
            self._watchdog = None
        else:
            loop = asyncio.get_running_loop()
            self._watchdog = loop.call_later(self.frame_timeout / 4, self._watch)

    def _time_out(self) -> None:
        self.timed_out = True
        self.abort()

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
        self._stop_watching()
        self.writer.close()

    def unsent(self) -> int:
        """Bytes written but still held by asyncio (the kernel's buffer is full)."""
        return int(self.writer.transport.get_write_buffer_size())

    def abort(self) -> None:
        """Drop the connection at once, as a network failure would."""
        self._stop_watching()
        self.writer.transport.abort()

    def _stop_watching(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    async def read_handshake_frame(
        self, kind: int, size: int, believed: tuple[str, ...] = ()
    ) -> bytes:
        """The payload of the next handshake frame, of ``kind`` and ``size`` bytes (a code
        refusal in its place is reported bare only if in ``believed``)."""
        body = self.decode(await self.read_handshake_raw())
        return parse_handshake_frame(body, self.who, kind, size, believed)


async def authenticate(
    connection: Connection,
    code: str,
    table: str,
    gate: SourceGate,
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
    connection.binding = keys.binding
    connection.datagram_secrets = (datagram_secret(keys.outgoing), datagram_secret(keys.incoming))


async def prove_key(
    connection: Connection,
    key: PeerKey | None,
    other: Hello,
    hellos: tuple[bytes, bytes],
    dialed: bool,
) -> None:
    """With a key, each end proves it holds the key of its peer id: it signs both hellos (a
    fresh nonce in each) and the connection's binding. The listener proves first, right after
    its hello; the dialer checks that, then proves in turn (``Refused`` on a wrong proof: nobody
    links under a peer id without its key). ``hellos``: the dialer's and the listener's."""
    if key is None:
        return
    dialer_hello, listener_hello = hellos
    binding = connection.binding
    mine = key.sign(proof_message(dialed, dialer_hello, listener_hello, binding))
    if not dialed:
        connection.write([KIND_PROOF, mine])
    theirs = await connection.read_handshake_frame(KIND_PROOF, SIGNATURE_SIZE)
    check_proof(other, proof_message(not dialed, dialer_hello, listener_hello, binding), theirs)
    if dialed:
        connection.write([KIND_PROOF, mine])


async def code_check_turn(gate: SourceGate) -> None:
    """Wait until no failed check holds the code checks back; a handshake that would wait past
    its time limit is given up. No await may come between this and the check itself: then
    whoever is let in first and fails holds back the others let in at the same time."""
    give_up_at = gate.now() + HANDSHAKE_TIMEOUT
    while (wait := gate.wait()) > 0:
        if gate.too_late(give_up_at):
            raise asyncio.TimeoutError
        await asyncio.sleep(wait)


async def _confirm_first(connection: Connection, gate: SourceGate, keys: SessionKeys) -> None:
    await code_check_turn(gate)
    connection.write([KIND_CONFIRM, keys.my_confirmation])
    try:
        # Only here, in answer to our confirmation, is "wrong table code" believed.
        answer = await connection.read_handshake_frame(
            KIND_CONFIRM, CONFIRMATION_SIZE, believed=(WRONG_CODE,)
        )
        if not hmac.compare_digest(answer, keys.their_confirmation):
            raise Refused(WRONG_CODE)
    except Exception:
        # Our confirmation answered one guess of whoever listens there: hold the other checks
        # back as a listener does (but report this failure at once).
        gate.hold()
        raise


async def _confirm_second(connection: Connection, gate: SourceGate, keys: SessionKeys) -> None:
    answer = await connection.read_handshake_frame(KIND_CONFIRM, CONFIRMATION_SIZE)
    await code_check_turn(gate)
    if not hmac.compare_digest(answer, keys.their_confirmation):
        gate.hold()
        await asyncio.sleep(gate.penalty)  # the guesser waits for its answer too
        raise Refused(WRONG_CODE)
    connection.write([KIND_CONFIRM, keys.my_confirmation])


async def cancel_within(
    tasks: set[asyncio.Future[Any]], grace: float, connections: Sequence[Connection] = ()
) -> None:
    """Cancel ``tasks`` and wait for them at most ``grace`` seconds; if some live on (a cancel
    swallowed on the way), drop ``connections`` so their reads fail, and give them as long
    again. Whatever still runs then is logged, not waited for."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=grace)
    if pending:
        for connection in connections:
            connection.abort()
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=grace)
    for task in pending:
        log.warning("closing the mesh: a task did not end: %r", task)
    for task in tasks - pending:
        if not task.cancelled():
            task.exception()  # retrieved: a failure while closing is not worth a report
