"""The TCP mesh over real sockets on 127.0.0.1: reliable FIFO links, reconnects, refusals."""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import logging
import struct
from collections.abc import Awaitable, Callable

import msgpack
import pytest

from net._mesh.handshake import Hello
from net._mesh.parts import MeshConfig, MeshListener
from net.testing.faults import DelayedMesh
from tests.net_real.meshkit import Meshes, run_meshes, until


def test_frames_arrive_once_and_in_order_across_a_dropped_connection() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = meshes.make("a"), meshes.make("b")
        port_b = await b.mesh.async_listen("127.0.0.1")
        await a.mesh.async_listen("127.0.0.1")
        a.mesh.connect("b", "127.0.0.1", port_b)
        for i in range(200):
            a.mesh.send("b", f"m{i}".encode())
            if i == 100:
                await until(lambda: len(b.frames) > 50)
                a.mesh.cut("b")  # under the mesh's feet, as a Wi-Fi drop would
        await until(lambda: len(b.frames) == 200)
        assert [d for _, d in b.frames] == [f"m{i}".encode() for i in range(200)]
        await until(lambda: a.mesh.queued("b") == 0)
        # It reconnects: the datagram path may have brought the last frames before it does.
        await until(lambda: len(b.connected) >= 2)
        assert all(not restarted for _, restarted in b.connected)

    run_meshes(scenario)


def test_closing_drops_a_connection_whose_bytes_cannot_drain() -> None:
    """A peer that stops acknowledging (a one-way cut) must not keep our socket open, nor our
    close waiting, until TCP gives up minutes later."""

    async def scenario(meshes: Meshes) -> None:
        a, b = meshes.make("a"), meshes.make("b")
        port_b = await b.mesh.async_listen("127.0.0.1")
        a.mesh.connect("b", "127.0.0.1", port_b)
        await until(lambda: a.connected and b.connected)
        b.mesh.stop_reading("a")
        connection = a.mesh._links["b"].connection
        assert connection is not None
        for _ in range(20_000):  # far more than the kernel's buffers hold
            a.mesh.send("b", bytes(4000))
            if connection.unsent():
                break
        assert connection.unsent(), "the kernel took it all: nothing to drain"
        sock = connection.writer.get_extra_info("socket")
        await a.mesh.async_close()
        assert sock.fileno() == -1, "the connection's socket is still open"

    run_meshes(scenario)


def test_frames_sent_into_a_lost_connection_are_resent_not_logged_as_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Between a connection's loss and its reader noticing, sends must not go into the dead
    socket (asyncio logs each as "socket.send() raised exception": thousands of lines in a
    soak); they wait for the next connection."""

    async def scenario(meshes: Meshes) -> None:
        a, b = meshes.make("a"), meshes.make("b")
        port_b = await b.mesh.async_listen("127.0.0.1")
        a.mesh.connect("b", "127.0.0.1", port_b)
        await until(lambda: a.connected and b.connected)
        a.mesh.cut("b")  # lost; the reader has not noticed yet
        for i in range(20):
            a.mesh.send("b", b"after %d" % i)
        await until(lambda: len(b.frames) == 20)
        assert [d for _, d in b.frames] == [b"after %d" % i for i in range(20)]

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        run_meshes(scenario)
    assert not [r for r in caplog.records if "raised exception" in r.getMessage()]


def test_simultaneous_dials_leave_one_connection_and_both_directions_work() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = meshes.make("a"), meshes.make("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        port_b = await b.mesh.async_listen("127.0.0.1")
        a.mesh.connect("b", "127.0.0.1", port_b)
        b.mesh.connect("a", "127.0.0.1", port_a)
        for i in range(50):
            a.mesh.send("b", b"to b %d" % i)
            b.mesh.send("a", b"to a %d" % i)
        await until(lambda: len(a.frames) == 50 and len(b.frames) == 50)
        assert [d for _, d in a.frames] == [b"to a %d" % i for i in range(50)]
        assert [d for _, d in b.frames] == [b"to b %d" % i for i in range(50)]

    run_meshes(scenario)


def test_a_mismatched_version_is_refused_with_a_readable_message() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = meshes.make("a", protocol=1), meshes.make("b", protocol=2)
        port_b = await b.mesh.async_listen("127.0.0.1")
        a.mesh.connect("b", "127.0.0.1", port_b)
        await until(lambda: bool(a.problems) and bool(b.problems))
        assert "update nerts-lan on every laptop" in a.problems[0][1]
        assert "protocol version 1 does not match ours (2)" in b.problems[0][1]
        assert not a.connected and not b.connected

    run_meshes(scenario)


def test_a_restarted_peer_is_reported_as_a_new_incarnation() -> None:
    async def scenario(meshes: Meshes) -> None:
        a = meshes.make("a")
        port_a = await a.mesh.async_listen("127.0.0.1")
        first = meshes.make("b", incarnation=1)
        first.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: a.connected == [("b", False)])
        await first.mesh.async_close()
        second = meshes.make("b", incarnation=2)
        second.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: len(a.connected) == 2)
        assert a.connected[1] == ("b", True)
        a.mesh.send("b", b"welcome back")
        await until(lambda: second.frames == [("a", b"welcome back")])

    run_meshes(scenario)


def test_hostile_bytes_close_that_connection_only() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = meshes.make("a"), meshes.make("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: ("b", False) in a.connected)
        attacks = [
            struct.pack(">I", 1 << 30),  # oversized frame
            struct.pack(">I", 3) + b"\xc1\xc1\xc1",  # not msgpack
            struct.pack(">I", 2) + b"\x91\x05",  # unknown kind, no hello
            struct.pack(">I", 4) + b"\xd4\x01\x02\x03",  # an ext type
        ]
        for count, attack in enumerate(attacks, start=1):
            _, writer = await asyncio.open_connection("127.0.0.1", port_a)
            writer.write(attack)
            await writer.drain()
            await until(lambda n=count: len(a.problems) >= n)  # type: ignore[misc]
            writer.close()
        await until(lambda: len(a.problems) >= len(attacks))
        reasons = " | ".join(reason for _, reason in a.problems)
        assert "over the 4096 byte limit" in reasons
        assert "undecodable frame" in reasons and "malformed hello" in reasons
        b.mesh.send("a", b"still here")
        await until(lambda: ("b", b"still here") in a.frames)

    run_meshes(scenario)


def test_a_newcomer_who_knows_one_member_is_linked_to_all() -> None:
    async def scenario(meshes: Meshes) -> None:
        nodes = [meshes.make(name) for name in ("a", "b", "c", "d")]
        ports = [await n.mesh.async_listen("127.0.0.1") for n in nodes]
        # b, c and d each know only a (the host, found over mDNS in the game).
        for node in nodes[1:]:
            node.mesh.connect("a", "127.0.0.1", ports[0])
        everyone = {"a", "b", "c", "d"}
        await until(lambda: all(n.mesh.connected() == everyone - {n.mesh.me.peer} for n in nodes))
        nodes[3].mesh.send("b", b"hello b")
        await until(lambda: ("d", b"hello b") in nodes[1].frames)

    run_meshes(scenario)


def test_frames_queued_while_a_peer_was_down_reach_its_new_incarnation() -> None:
    async def scenario(meshes: Meshes) -> None:
        a = meshes.make("a")
        port_a = await a.mesh.async_listen("127.0.0.1")
        first = meshes.make("b", incarnation=1)
        first.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: a.connected == [("b", False)])
        await first.mesh.async_close()
        await until(lambda: a.mesh.connected() == set())
        a.mesh.send("b", b"welcome to the group")  # queued while nobody is there
        second = meshes.make("b", incarnation=2)
        second.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: ("a", b"welcome to the group") in second.frames)
        a.mesh.send("b", b"and more")
        await until(lambda: len(second.frames) == 2)
        assert [d for _, d in second.frames] == [b"welcome to the group", b"and more"]

    run_meshes(scenario)


def test_gossip_of_an_address_off_our_networks_is_never_dialed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A member cannot make us connect anywhere it likes: an address it gossips, or gives as its
    own listening address, is dialed only if it is on one of our interfaces' networks. Here
    "our networks" are narrowed to 127.0.0.1 alone, and the lure listens on 127.0.0.2."""
    ours = [ipaddress.IPv4Network("127.0.0.1/32")]

    async def scenario(meshes: Meshes) -> None:
        dialed: list[str] = []

        async def lure(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            dialed.append("lure")
            writer.close()

        server = await asyncio.start_server(lure, "127.0.0.2", 0)
        meshes.at_end(_closer(server))
        lure_port = server.sockets[0].getsockname()[1]
        a, b = meshes.make("a", local_networks=lambda: ours), meshes.make("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        # A raw member says hello with a listening address on 127.0.0.2, then gossips another
        # peer there, then sends a frame: once that frame is in, the gossip has been acted on
        # (frames of one connection are handled in order, and a dial is decided at once).
        _, writer = await asyncio.open_connection("127.0.0.1", port_a)
        for body in (
            [0, 1, "t1", "mallory", "M", 1, 0, -1, ["127.0.0.2", lure_port]],
            [4, [["ghost", "127.0.0.2", lure_port]]],
            [1, 1, b"after the gossip"],
        ):
            data = msgpack.packb(body)
            writer.write(struct.pack(">I", len(data)) + data)
        await writer.drain()
        # And an honest member gossips a peer on 127.0.0.1.
        port_b = await b.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: "b" in a.mesh.connected() and "mallory" in a.mesh.connected())
        await until(lambda: ("mallory", b"after the gossip") in a.frames)
        assert "ghost" not in a.mesh.addresses() and "mallory" not in a.mesh.addresses()
        assert a.mesh.addresses()["b"] == ("127.0.0.1", port_b)
        assert "told us of ghost at 127.0.0.2, not on our networks: ignored" in caplog.text
        assert dialed == []
        writer.close()

    with caplog.at_level(logging.WARNING, logger="net._mesh.mesh"):
        run_meshes(scenario)


def _closer(server: asyncio.Server) -> Callable[[], Awaitable[None]]:
    async def close() -> None:
        server.close()

    return close


def test_a_delayed_mesh_holds_frames_back_and_keeps_their_order() -> None:
    """The fault injection of ``Node(delay=...)``: each frame waits its own delay, but never
    overtakes the one before it."""

    async def scenario(meshes: Meshes) -> None:
        b = meshes.make("b")
        port_b = await b.mesh.async_listen("127.0.0.1")
        delays = itertools.cycle([0.03, 0.0, 0.01])
        hello = Hello(1, "t1", "a", "A", 0)
        a = DelayedMesh(hello, MeshListener(), MeshConfig(max_frame=4096), lambda: next(delays))
        meshes.keep(a)
        a.connect("b", "127.0.0.1", port_b)
        await until(lambda: a.connected() == {"b"})
        for i in range(50):
            a.send("b", b"m%d" % i)
        await until(lambda: len(b.frames) == 50)
        assert [d for _, d in b.frames] == [b"m%d" % i for i in range(50)]
        await until(lambda: a.queued("b") == 0)

    run_meshes(scenario)


def test_a_delayed_mesh_keeps_the_order_of_frames_due_at_the_same_time() -> None:
    """A frame whose delay ends before the one before it is written right after it, at the same
    time: the loop runs timers due together in no set order, and a frame written first broke
    the link ("frame 13 skips 12"), so the slow-link benchmark and tests measured reconnects."""

    async def scenario(meshes: Meshes) -> None:
        b = meshes.make("b", datagrams=False)
        port_b = await b.mesh.async_listen("127.0.0.1")
        delays = itertools.cycle([0.005, 0.001, 0.003, 0.002, 0.004])
        hello = Hello(1, "t1", "a", "A", 0)
        off = MeshConfig(max_frame=4096, datagrams=False)
        a = meshes.keep(DelayedMesh(hello, MeshListener(), off, lambda: next(delays)))
        a.connect("b", "127.0.0.1", port_b)
        await until(lambda: a.connected() == {"b"})
        for i in range(1000):
            a.send("b", b"m%d" % i)
            if i % 7 == 0:
                await asyncio.sleep(0.001)
        await until(lambda: len(b.frames) == 1000)
        assert [d for _, d in b.frames] == [b"m%d" % i for i in range(1000)]
        assert b.problems == []

    run_meshes(scenario)
