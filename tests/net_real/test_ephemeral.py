"""Ephemeral frames of the TCP mesh on 127.0.0.1: best effort, beside the reliable ordered frames.

Policy under test: a well-formed ephemeral frame whose payload is over the limit, or one the
application's handler chokes on, is dropped and the link stays up; a malformed envelope closes
the connection like any other protocol breach (the ordered frames are then resent on the next
connection, so nothing of the game is lost either way).
"""

from __future__ import annotations

import pytest

from net._mesh.mesh import MAX_EPHEMERAL
from tests.net_real.meshkit import Meshes, RecordingMesh, run_meshes, until


async def _pair(meshes: Meshes, explode: bool = False) -> tuple[RecordingMesh, RecordingMesh]:
    a, b = meshes.make("a"), meshes.make("b", explode=explode)
    port_b = await b.mesh.async_listen("127.0.0.1")
    await a.mesh.async_listen("127.0.0.1")
    a.mesh.connect("b", "127.0.0.1", port_b)
    await until(lambda: a.mesh.connected() == {"b"} and b.mesh.connected() == {"a"})
    return a, b


def test_ephemeral_frames_arrive_while_the_link_is_up_and_take_no_place_in_the_order() -> None:
    async def scenario(meshes: Meshes) -> None:
        a, b = await _pair(meshes)
        a.mesh.send("b", b"ordered 1")
        assert a.mesh.send_ephemeral("b", b"pointer 1")
        a.mesh.send("b", b"ordered 2")
        await until(lambda: len(b.frames) == 2 and len(b.ephemeral) == 1)
        assert b.ephemeral == [("a", b"pointer 1")]
        assert [d for _, d in b.frames] == [b"ordered 1", b"ordered 2"]
        await until(lambda: a.mesh.queued("b") == 0)  # nothing kept for a resend
        assert not a.mesh.send_ephemeral("nobody", b"x")
        with pytest.raises(ValueError):
            a.mesh.send_ephemeral("b", b"x" * (MAX_EPHEMERAL + 1))

    run_meshes(scenario)


def test_ephemeral_frames_are_dropped_while_the_link_is_down_and_never_resent() -> None:
    async def scenario(meshes: Meshes) -> None:
        a = meshes.make("a")
        port_a = await a.mesh.async_listen("127.0.0.1")
        first = meshes.make("b", incarnation=1)
        first.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: a.mesh.connected() == {"b"})
        await first.mesh.async_close()
        await until(lambda: a.mesh.connected() == set())
        assert not a.mesh.send_ephemeral("b", b"lost pointer")
        a.mesh.send("b", b"kept for later")
        second = meshes.make("b", incarnation=2)
        second.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: ("a", b"kept for later") in second.frames)
        assert a.mesh.send_ephemeral("b", b"fresh pointer")
        await until(lambda: bool(second.ephemeral))
        assert second.ephemeral == [("a", b"fresh pointer")]

    run_meshes(scenario)


def test_hostile_ephemeral_frames_are_dropped_or_cost_one_connection_never_an_ordered_frame() -> (
    None
):
    async def scenario(meshes: Meshes) -> None:
        a, b = await _pair(meshes, explode=True)
        # Over the limit (a peer that does not use send_ephemeral): dropped, link kept.
        a.mesh.write_raw("b", [5, b"x" * (MAX_EPHEMERAL + 1)])
        # The application's handler raises: dropped, link kept.
        a.mesh.send_ephemeral("b", b"boom")
        a.mesh.send("b", b"after the junk")
        await until(lambda: ("a", b"after the junk") in b.frames)
        assert b.ephemeral == []
        assert any("dropped an ephemeral frame of 513 bytes" in r for _, r in b.problems)
        assert b.connected == [("a", False)]  # still the first connection
        # A malformed envelope (text instead of bytes) breaks the protocol: that connection
        # closes, a new one comes up, and the ordered frames carry on, once and in order.
        a.mesh.write_raw("b", [5, "not bytes"])
        for i in range(20):
            a.mesh.send("b", b"m%d" % i)
        await until(lambda: len(b.frames) == 21)
        assert [d for _, d in b.frames[1:]] == [b"m%d" % i for i in range(20)]
        assert any("malformed frame from a" in r for _, r in b.problems)
        await until(lambda: len(b.connected) >= 2)
        assert a.mesh.send_ephemeral("b", b"pointer again")
        await until(lambda: b.ephemeral == [("a", b"pointer again")])

    run_meshes(scenario)
