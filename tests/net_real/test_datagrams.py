"""The datagram path on 127.0.0.1: frames held back on TCP still arrive, by datagram, in order and
acknowledged; what is not a fresh datagram of a linked peer's present incarnation is dropped and
counted, never delivered."""

from __future__ import annotations

import socket

from net._mesh.datagrams import Datagram, seal
from net._mesh.handshake import Hello
from net._mesh.mesh import Mesh
from net._mesh.parts import MeshConfig
from net.testing.faults import DelayedMesh
from tests.net_real.meshkit import Meshes, RecordingMesh, run_meshes, until

HELD = 60.0
"""Seconds the TCP copy of every frame is held back: longer than any test."""


async def _linked_through_held_tcp(
    meshes: Meshes, **options: object
) -> tuple[DelayedMesh, RecordingMesh]:
    """``a``, whose frames TCP holds back, linked to ``b``; both take datagrams."""
    b = meshes.make("b", **options)
    port_b = await b.mesh.async_listen("127.0.0.1")
    config = MeshConfig(max_frame=4096, **options)  # type: ignore[arg-type]
    a = DelayedMesh(Hello(1, "t1", "a", "A", 0), RecordingMesh("a"), config, lambda: HELD, True)
    meshes.keep(a)
    await a.async_listen("127.0.0.1")
    a.connect("b", "127.0.0.1", port_b)
    await until(lambda: a.connected() == {"b"} and b.mesh.connected() == {"a"})
    return a, b


def test_frames_held_on_tcp_arrive_by_datagram_in_order_and_are_acknowledged() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = await _linked_through_held_tcp(meshes)
        await until(lambda: a.datagrams._sending(a._links["b"]) is not None)
        for i in range(100):
            a.send("b", b"m%d" % i)
        await until(lambda: len(b.frames) == 100)
        assert [d for _, d in b.frames] == [b"m%d" % i for i in range(100)]
        await until(lambda: a.queued("b") == 0)  # acknowledged by datagram: TCP said nothing
        assert b.mesh.datagrams.counts["delivered"] > 0

    run_meshes(scenario)


def test_a_coded_table_exchanges_frames_by_datagram_too() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = await _linked_through_held_tcp(meshes, table_code="plum-4477")
        await until(lambda: a.datagrams._sending(a._links["b"]) is not None)
        a.send("b", b"private")
        await until(lambda: [d for _, d in b.frames] == [b"private"])

    run_meshes(scenario)


def test_a_mesh_with_datagrams_off_neither_sends_nor_takes_them() -> None:
    async def scenario(meshes: Meshes) -> None:
        b = meshes.make("b")
        port_b = await b.mesh.async_listen("127.0.0.1")
        off = MeshConfig(max_frame=4096, datagrams=False)
        a = meshes.keep(Mesh(Hello(1, "t1", "a", "A", 0), RecordingMesh("a"), off))
        await a.async_listen("127.0.0.1")
        a.connect("b", "127.0.0.1", port_b)
        await until(lambda: a.connected() == {"b"})
        for i in range(5):
            a.send("b", b"m%d" % i)
            b.mesh.send("a", b"n%d" % i)
        await until(lambda: len(b.frames) == 5 and a.queued("b") == 0 == b.mesh.queued("a"))
        assert not a.datagrams.counts and not b.mesh.datagrams.counts

    run_meshes(scenario)


def test_forged_garbled_replayed_and_stale_datagrams_are_dropped_and_counted() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = await _linked_through_held_tcp(meshes)
        await until(lambda: a.datagrams._sending(a._links["b"]) is not None)
        a.send("b", b"genuine")
        await until(lambda: len(b.frames) == 1)
        side = a.datagrams._sides["b"]
        assert side.send_key is not None and side.destination is not None
        key, destination = side.send_key, side.destination

        def datagram(incarnation: int = 0, seq: int = 2, key: bytes = key) -> bytes:
            return seal(key, Datagram("a", incarnation, 0, seq, b"forged"))

        hostile = {
            "bad tag": [datagram(key=bytes(32))],  # forged: not the key b announced
            "malformed": [b"\x00" * 3, b"\xc1" * 50],
            "duplicate": [datagram(seq=1)],  # a replay of what was delivered
            "other incarnation": [datagram(incarnation=5)],
            "unknown sender": [seal(key, Datagram("z", 0, 0, 2, b"forged"))],
        }
        garbled = bytearray(datagram())
        garbled[-1] ^= 0xFF
        hostile["bad tag"].append(bytes(garbled))
        before = dict(b.mesh.datagrams.counts)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as attacker:
            for raws in hostile.values():
                for raw in raws:
                    attacker.sendto(raw, destination)

        def counted() -> bool:
            counts = b.mesh.datagrams.counts
            return all(
                counts[reason] - before.get(reason, 0) >= len(raws)
                for reason, raws in hostile.items()
            )

        await until(counted)
        a.send("b", b"still linked")
        await until(lambda: len(b.frames) == 2)
        assert [d for _, d in b.frames] == [b"genuine", b"still linked"]
        assert b.problems == []

    run_meshes(scenario)


def test_datagrams_follow_a_peer_to_the_address_its_new_frames_come_from() -> None:
    """As if ``a`` had moved: ``b`` sends to an old address until a datagram with new frames
    comes from ``a``; then its acknowledgements reach ``a`` there."""

    async def scenario(meshes: Meshes) -> None:
        a, b = await _linked_through_held_tcp(meshes)
        await until(lambda: b.mesh.datagrams._sending(b.mesh._links["a"]) is not None)
        side = b.mesh.datagrams._sides["a"]
        assert side.destination is not None
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as gone:
            gone.bind(("127.0.0.1", 0))
            side.destination = gone.getsockname()  # nobody reads there any more
            real = a.datagrams.port
            a.send("b", b"from the new address")
            await until(lambda: len(b.frames) == 1)
            assert side.destination == ("127.0.0.1", real)
            await until(lambda: a.queued("b") == 0)  # b's acknowledgement by datagram came

    run_meshes(scenario)
