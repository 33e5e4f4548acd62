"""Tables with a code, over real sockets on 127.0.0.1: SPAKE2, key confirmation, tagged frames.

A man in the middle (``mitm.FrameProxy``) alters, replays, drops and forges frames after the
handshake: each time the receiver closes that connection naming the frame, the link dials again,
and the numbered frames still arrive once and in order. How far failed code checks are spaced
is tested in simulated time (tests/net/test_handshake.py) and measured by ``nerts-lan bench``.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable

import msgpack
import pytest

from net._mesh.handshake import CODE_NEEDED, NO_CODE_HERE, WRONG_CODE
from tests.net_real.meshkit import Meshes, RecordingMesh, fake_peer, run_meshes, until
from tests.net_real.mitm import TAG_SIZE, FrameProxy, is_tagged_data

CODE = "7 tigers"
QUICK_PENALTY = 0.05


def coded(meshes: Meshes, peer: str, code: str | None = CODE) -> RecordingMesh:
    return meshes.make(peer, table_code=code, wrong_code_delay=QUICK_PENALTY)


def reasons(node: RecordingMesh) -> str:
    return " | ".join(reason for _, reason in node.problems)


async def proxied(meshes: Meshes, port: int) -> FrameProxy:
    """A man in the middle in front of ``port``, closed at the end of the scenario."""
    proxy = FrameProxy(port)
    await proxy.start()
    meshes.at_end(proxy.close)
    return proxy


def test_peers_with_the_same_code_exchange_ordered_and_ephemeral_frames() -> None:
    async def scenario(meshes: Meshes) -> None:
        nodes = [coded(meshes, name) for name in ("a", "b", "c")]
        ports = [await n.mesh.async_listen("127.0.0.1") for n in nodes]
        for node in nodes[1:]:
            node.mesh.connect("a", "127.0.0.1", ports[0])
        everyone = {"a", "b", "c"}
        await until(lambda: all(n.mesh.connected() == everyone - {n.mesh.me.peer} for n in nodes))
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

    run_meshes(scenario)


def test_a_wrong_code_is_refused_on_both_sides_and_the_link_keeps_trying() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = coded(meshes, "a", "1234"), coded(meshes, "b", "1243")
        port_a = await a.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: reasons(a).count(WRONG_CODE) >= 2)
        await until(lambda: WRONG_CODE in reasons(b))
        assert ("a", WRONG_CODE) in b.problems  # the bare reason: the application shows it
        assert not a.connected and not b.connected

    run_meshes(scenario)


@pytest.mark.parametrize(
    ("listener_code", "dialer_code", "reason"),
    [(CODE, None, CODE_NEEDED), (None, CODE, NO_CODE_HERE)],
    ids=["codeless-dialer", "coded-dialer"],
)
def test_a_peer_with_a_code_and_one_without_never_link(
    listener_code: str | None, dialer_code: str | None, reason: str
) -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = coded(meshes, "a", listener_code), coded(meshes, "b", dialer_code)
        port_a = await a.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: bool(a.problems) and bool(b.problems))
        assert a.problems[0][1] == reason
        assert b.problems[0] == ("a", reason)
        assert not a.connected and not b.connected

    run_meshes(scenario)


def test_a_coded_dialer_refuses_a_listener_without_a_code() -> None:
    """A listener of an older make answers with a hello that has no code: the dialer refuses."""

    async def scenario(meshes: Meshes) -> None:
        refusal: list[object] = []

        async def old_listener(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await _read_frame(reader)  # the dialer's hello
            _write_frame(writer, [0, 1, "t1", "a", "A", 0, 0, -1, None])
            refusal.append(await _read_frame(reader))

        port = await fake_peer(meshes, old_listener)
        b = coded(meshes, "b")
        b.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: bool(refusal) and bool(b.problems))
        assert refusal[0] == [3, CODE_NEEDED]
        assert b.problems[0] == ("a", CODE_NEEDED)

    run_meshes(scenario)


def test_guessers_are_refused_while_a_peer_with_the_right_code_gets_in() -> None:
    """Three guessers dial at once and keep dialing; the host refuses them with the bare reason,
    and a peer with the right code still gets in meanwhile, waiting its turn behind the failed
    checks (how far they are spaced: tests/net/test_handshake.py, in simulated time)."""

    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a", table_code=CODE, wrong_code_delay=0.25)
        port = await host.mesh.async_listen("127.0.0.1")
        guessers = [coded(meshes, f"g{i}", f"guess {i}") for i in range(3)]
        friend = coded(meshes, "friend")
        for guesser in guessers:
            guesser.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: WRONG_CODE in reasons(host))
        friend.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: host.mesh.connected() == {"friend"} and bool(friend.connected))
        assert all(reason == WRONG_CODE for _, reason in host.problems)
        assert not any(guesser.connected for guesser in guessers)
        assert friend.connected == [("a", False)]

    run_meshes(scenario)


def test_hello_fields_are_bound_to_the_key() -> None:
    """A man in the middle who changes a field of the (cleartext) hello fails the confirmation."""

    async def scenario(meshes: Meshes) -> None:
        a, b = coded(meshes, "a"), coded(meshes, "b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        proxy = await proxied(meshes, port_a)

        def rename(connection: int, index: int, body: bytes) -> list[bytes]:
            if index == 0:
                hello = msgpack.unpackb(body)
                hello[4] = "Mallory"  # the display name
                return [msgpack.packb(hello)]
            return [body]

        proxy.rule = rename
        b.mesh.connect("a", "127.0.0.1", proxy.port)
        await until(lambda: WRONG_CODE in reasons(a) and WRONG_CODE in reasons(b))
        assert not a.connected and not b.connected

    run_meshes(scenario)


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
    async def scenario(meshes: Meshes) -> None:
        a, b = coded(meshes, "a"), coded(meshes, "b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        proxy = await proxied(meshes, port_a)
        a.mesh.advertise("127.0.0.1", proxy.port)  # a is reached only through the proxy
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
        await until(lambda: a.mesh.connected() == {"b"})
        for i in range(100):
            b.mesh.send("a", b"m%d" % i)
            if i % 10 == 0:
                await asyncio.sleep(0.005)  # spread the frames over several writes
        await until(lambda: len(a.frames) == 100)
        assert [d for _, d in a.frames] == [b"m%d" % i for i in range(100)]
        await until(lambda: b.mesh.queued("a") == 0)
        assert "failed authentication" in reasons(a)
        assert any(
            r.startswith("frame ") and r.endswith(" from b failed authentication")
            for _, r in a.problems
        )
        assert proxy.connections >= 2  # it dialed again through the proxy

    run_meshes(scenario)


def test_a_frame_from_an_earlier_connection_is_worthless_on_a_later_one() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = coded(meshes, "a"), coded(meshes, "b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        proxy = await proxied(meshes, port_a)
        a.mesh.advertise("127.0.0.1", proxy.port)
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
        b.mesh.send("a", b"first")
        await until(lambda: a.frames == [("b", b"first")] and bool(captured))
        b.mesh.cut("a")  # a Wi-Fi drop: the next connection goes via the proxy
        await until(lambda: proxy.connections >= 2)
        b.mesh.send("a", b"second")
        await until(lambda: ("b", b"second") in a.frames)
        assert a.frames == [("b", b"first"), ("b", b"second")]
        # (b is a stranger to a, which never wrote to it: its first frame is read, and fails,
        # before it is linked, so the problem names its address.)
        assert any(
            r.startswith("frame 1 from ") and r.endswith(" failed authentication")
            for _, r in a.problems
        )
        assert proxy.connections >= 3

    run_meshes(scenario)


async def _read_frame(reader: asyncio.StreamReader) -> object:
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    return msgpack.unpackb(await reader.readexactly(length))


def _write_frame(writer: asyncio.StreamWriter, body: object) -> None:
    data = msgpack.packb(body)
    writer.write(struct.pack(">I", len(data)) + data)
