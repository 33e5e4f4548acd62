"""Tables with a code, over real sockets on 127.0.0.1: SPAKE2, key confirmation, tagged frames.

A man in the middle (``mitm.FrameProxy``) alters, replays, drops and forges frames after the
handshake: each time the receiver closes that connection naming the frame, the link dials again,
and the numbered frames still arrive once and in order.
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Callable

import msgpack
import pytest

from net.transport import CODE_NEEDED, NO_CODE_HERE, WRONG_CODE

from .meshkit import RecordingMesh, until
from .mitm import TAG_SIZE, FrameProxy, is_tagged_data

CODE = "7 tigers"
QUICK_PENALTY = 0.05


def coded(peer: str, code: str | None = CODE, **options: object) -> RecordingMesh:
    return RecordingMesh(peer, table_code=code, wrong_code_delay=QUICK_PENALTY, **options)


def reasons(node: RecordingMesh) -> str:
    return " | ".join(reason for _, reason in node.problems)


def test_peers_with_the_same_code_exchange_ordered_and_ephemeral_frames() -> None:
    async def scenario() -> None:
        nodes = [coded(name) for name in ("a", "b", "c")]
        ports = [await n.mesh.async_listen("127.0.0.1") for n in nodes]
        try:
            for node in nodes[1:]:
                node.mesh.connect("a", "127.0.0.1", ports[0])
            everyone = {"a", "b", "c"}
            await until(
                lambda: all(n.mesh.connected() == everyone - {n.mesh.me.peer} for n in nodes)
            )
            a, b, c = nodes
            for i in range(100):
                a.mesh.send("b", b"a to b %d" % i)
                b.mesh.send("c", b"b to c %d" % i)
                c.mesh.send("a", b"c to a %d" % i)
            assert a.mesh.send_ephemeral("c", b"pointer")
            await until(lambda: all(len(n.frames) == 100 for n in nodes) and bool(c.ephemeral))
            assert [d for _, d in b.frames] == [b"a to b %d" % i for i in range(100)]
            assert [d for _, d in c.frames] == [b"b to c %d" % i for i in range(100)]
            assert [d for _, d in a.frames] == [b"c to a %d" % i for i in range(100)]
            assert c.ephemeral == [("a", b"pointer")]
            assert not any(n.problems for n in nodes)
        finally:
            for node in nodes:
                await node.mesh.async_close()

    asyncio.run(scenario())


def test_a_wrong_code_is_refused_on_both_sides_and_the_link_keeps_trying() -> None:
    async def scenario() -> None:
        a, b = coded("a", "1234"), coded("b", "1243")
        port_a = await a.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        try:
            await until(lambda: reasons(a).count(WRONG_CODE) >= 2)
            await until(lambda: WRONG_CODE in reasons(b))
            assert ("a", WRONG_CODE) in b.problems  # the bare reason: the application shows it
            assert not a.connected and not b.connected
        finally:
            await a.mesh.async_close()
            await b.mesh.async_close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("listener_code", "dialer_code", "reason"),
    [(CODE, None, CODE_NEEDED), (None, CODE, NO_CODE_HERE)],
    ids=["codeless-dialer", "coded-dialer"],
)
def test_a_peer_with_a_code_and_one_without_never_link(
    listener_code: str | None, dialer_code: str | None, reason: str
) -> None:
    async def scenario() -> None:
        a, b = coded("a", listener_code), coded("b", dialer_code)
        port_a = await a.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        try:
            await until(lambda: bool(a.problems) and bool(b.problems))
            assert a.problems[0][1] == reason
            assert b.problems[0] == ("a", reason)
            assert not a.connected and not b.connected
        finally:
            await a.mesh.async_close()
            await b.mesh.async_close()

    asyncio.run(scenario())


def test_a_coded_dialer_refuses_a_listener_without_a_code() -> None:
    """A listener of an older make answers with a hello that has no code: the dialer refuses."""

    async def scenario() -> None:
        refusal: list[object] = []

        async def old_listener(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await _read_frame(reader)  # the dialer's hello
            _write_frame(writer, [0, 1, "t1", "a", "A", 0, 0, -1, None])
            refusal.append(await _read_frame(reader))
            writer.close()

        server = await asyncio.start_server(old_listener, "127.0.0.1", 0)
        b = coded("b")
        b.mesh.connect("a", "127.0.0.1", server.sockets[0].getsockname()[1])
        try:
            await until(lambda: bool(refusal) and bool(b.problems))
            assert refusal[0] == [3, CODE_NEEDED]
            assert b.problems[0] == ("a", CODE_NEEDED)
        finally:
            await b.mesh.async_close()
            server.close()

    asyncio.run(scenario())


def test_failed_code_checks_are_spaced_whatever_the_number_of_guessers() -> None:
    """Three guessers dial at once; the host checks at most one code per penalty, and a peer
    with the right code still gets in meanwhile."""

    async def scenario() -> None:
        penalty = 0.25
        host = RecordingMesh("a", table_code=CODE, wrong_code_delay=penalty)
        port = await host.mesh.async_listen("127.0.0.1")
        guessers = [coded(f"g{i}", f"guess {i}") for i in range(3)]
        friend = coded("friend")
        start = time.monotonic()
        for guesser in guessers:
            guesser.mesh.connect("a", "127.0.0.1", port)
        try:
            await asyncio.sleep(0.5)
            friend.mesh.connect("a", "127.0.0.1", port)
            await until(lambda: host.mesh.connected() == {"friend"})
            await asyncio.sleep(max(0.0, 1.5 - (time.monotonic() - start)))
            failed = reasons(host).count(WRONG_CODE)
            elapsed = time.monotonic() - start
            assert 1 <= failed <= elapsed / penalty + 1
        finally:
            for node in [host, friend, *guessers]:
                await node.mesh.async_close()

    asyncio.run(scenario())


def test_hello_fields_are_bound_to_the_key() -> None:
    """A man in the middle who changes a field of the (cleartext) hello fails the confirmation."""

    async def scenario() -> None:
        a, b = coded("a"), coded("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        proxy = FrameProxy(port_a)
        await proxy.start()

        def rename(connection: int, index: int, body: bytes) -> list[bytes]:
            if index == 0:
                hello = msgpack.unpackb(body)
                hello[4] = "Mallory"  # the display name
                return [msgpack.packb(hello)]
            return [body]

        proxy.rule = rename
        b.mesh.connect("a", "127.0.0.1", proxy.port)
        try:
            await until(lambda: WRONG_CODE in reasons(a) and WRONG_CODE in reasons(b))
            assert not a.connected and not b.connected
        finally:
            await proxy.close()
            await a.mesh.async_close()
            await b.mesh.async_close()

    asyncio.run(scenario())


def _flip(body: bytes) -> list[bytes]:
    altered = bytearray(body)
    altered[-TAG_SIZE - 1] ^= 0x01  # the last byte of the payload: still a valid frame
    return [bytes(altered)]


def _forge(body: bytes) -> list[bytes]:
    forged = msgpack.packb([1, 1_000_000, b"forged"]) + bytes(TAG_SIZE)
    return [forged, body]


TAMPERINGS: dict[str, Callable[[bytes], list[bytes]]] = {
    "flip": _flip,
    "replay": lambda body: [body, body],
    "drop": lambda body: [],
    "forge": _forge,
}


@pytest.mark.parametrize("tampering", sorted(TAMPERINGS))
def test_a_tampered_frame_closes_the_connection_and_nothing_is_lost(tampering: str) -> None:
    async def scenario() -> None:
        a, b = coded("a"), coded("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        proxy = FrameProxy(port_a)
        await proxy.start()
        a.mesh._listen = ("127.0.0.1", proxy.port)  # a is reached only through the proxy
        data_frames = 0

        def tamper_once(connection: int, index: int, body: bytes) -> list[bytes]:
            nonlocal data_frames
            if connection == 1 and is_tagged_data(index, body):
                data_frames += 1
                if data_frames == 10:
                    return TAMPERINGS[tampering](body)
            return [body]

        proxy.rule = tamper_once
        b.mesh.connect("a", "127.0.0.1", proxy.port)
        try:
            await until(lambda: a.mesh.connected() == {"b"})
            for i in range(100):
                b.mesh.send("a", b"m%d" % i)
                if i % 10 == 0:
                    await asyncio.sleep(0.005)
            await until(lambda: len(a.frames) == 100)
            assert [d for _, d in a.frames] == [b"m%d" % i for i in range(100)]
            await until(lambda: b.mesh.queued("a") == 0)
            assert "failed authentication" in reasons(a)
            assert any(
                r.startswith("frame ") and r.endswith(" from b failed authentication")
                for _, r in a.problems
            )
            assert proxy.connections >= 2  # it dialed again through the proxy
        finally:
            await proxy.close()
            await a.mesh.async_close()
            await b.mesh.async_close()

    asyncio.run(scenario())


def test_a_frame_from_an_earlier_connection_is_worthless_on_a_later_one() -> None:
    async def scenario() -> None:
        a, b = coded("a"), coded("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        proxy = FrameProxy(port_a)
        await proxy.start()
        a.mesh._listen = ("127.0.0.1", proxy.port)
        captured: list[bytes] = []

        def replay_across(connection: int, index: int, body: bytes) -> list[bytes]:
            # The first tagged frame of connection 1 stands in for that of connection 2: same
            # frame number, same body, the key of another connection.
            if index == 3 and connection == 1:
                captured.append(body)
            if index == 3 and connection == 2:
                return [captured[0]]
            return [body]

        proxy.rule = replay_across
        b.mesh.connect("a", "127.0.0.1", proxy.port)
        try:
            b.mesh.send("a", b"first")
            await until(lambda: a.frames == [("b", b"first")] and bool(captured))
            link = b.mesh._links["a"]
            assert link.writer is not None
            link.writer.transport.abort()  # a Wi-Fi drop: the next connection goes via the proxy
            await until(lambda: proxy.connections >= 2)
            b.mesh.send("a", b"second")
            await until(lambda: ("b", b"second") in a.frames)
            assert a.frames == [("b", b"first"), ("b", b"second")]
            assert any(r.endswith("frame 1 from b failed authentication") for _, r in a.problems)
            assert proxy.connections >= 3
        finally:
            await proxy.close()
            await a.mesh.async_close()
            await b.mesh.async_close()

    asyncio.run(scenario())


async def _read_frame(reader: asyncio.StreamReader) -> object:
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    return msgpack.unpackb(await reader.readexactly(length))


def _write_frame(writer: asyncio.StreamWriter, body: object) -> None:
    data = msgpack.packb(body)
    writer.write(struct.pack(">I", len(data)) + data)
