"""The datagram path on 127.0.0.1 after socket errors: an ICMP "port unreachable" (a datagram
sent to a closed port) and an endpoint asyncio closed for an error do not end it; frames still
arrive by datagram (TCP holds its copies back for longer than the test). On Windows (the
Windows lane) the closed port's ICMP error is real, which the proactor loop of Python 3.10 and
older 3.11/3.12 releases stopped reading after (cpython #91227)."""

from __future__ import annotations

import socket
import sys

from net._mesh.sockets import ignore_port_unreachable
from tests.net_real.meshkit import Meshes, run_meshes, until
from tests.net_real.test_datagrams import _linked_through_held_tcp


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_datagram_to_a_closed_port_does_not_stop_the_path_receiving() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = await _linked_through_held_tcp(meshes)
        await until(lambda: a.datagrams._sending(a._links["b"]) is not None)
        path = b.mesh.datagrams
        assert path._transport is not None
        for _ in range(3):  # the ICMP answers come back to b's socket (on Windows: resets)
            path._transport.sendto(b"to nobody", ("127.0.0.1", _closed_port()))
        path.error_received(ConnectionResetError(10054, "as Windows reports it"))
        for i in range(20):
            a.send("b", b"after %d" % i)
        await until(lambda: len(b.frames) == 20)
        assert path.counts["delivered"] > 0 and b.problems == []

    run_meshes(scenario)


def test_an_endpoint_closed_by_an_error_is_opened_again_on_the_same_port() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = await _linked_through_held_tcp(meshes)
        await until(lambda: a.datagrams._sending(a._links["b"]) is not None)
        a.send("b", b"before")
        await until(lambda: len(b.frames) == 1)
        path = b.mesh.datagrams
        port = path.port
        broken = path._transport
        assert broken is not None
        broken._force_close(OSError(10054, "as asyncio closes it on a fatal error"))  # type: ignore[attr-defined]
        await until(lambda: path.counts["reopened"] == 1 and path._transport is not None)
        assert path._transport is not broken and path.port == port
        a.send("b", b"after")
        await until(lambda: [d for _, d in b.frames] == [b"before", b"after"])
        assert path.counts["delivered"] >= 2

    run_meshes(scenario)


def test_windows_sockets_ignore_port_unreachable_and_others_need_not() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        assert ignore_port_unreachable(sock) is (sys.platform == "win32")
