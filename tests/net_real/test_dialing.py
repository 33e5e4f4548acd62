"""Dials on 127.0.0.1 with a connector that stands in for what this machine cannot produce (a
SYN that a firewall drops; Windows, which refuses a closed port only after about 2 s): a dial
still pending does not hold up the next, and a refusal is recorded as one."""

from __future__ import annotations

import asyncio
import errno

from net import refusals
from tests.net_real.meshkit import Meshes, run_meshes, until


def test_a_dial_that_hangs_does_not_hold_up_the_next_attempt() -> None:
    hung = asyncio.Event()  # never set: the first dial's SYN is dropped
    calls: list[tuple[str, int]] = []
    first_pending: list[bool] = []
    """Whether the first dial was still waiting when each later one started."""

    async def connect(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        calls.append((host, port))
        if len(calls) > 1:
            first_pending.append(waiting[0])
            return await asyncio.open_connection(host, port)
        waiting[0] = True
        try:
            await hung.wait()
        finally:
            waiting[0] = False
        raise AssertionError("never set")

    waiting = [False]

    async def scenario(meshes: Meshes) -> None:
        b = meshes.make("b")
        port = await b.mesh.async_listen("127.0.0.1")
        a = meshes.make("a", connect=connect)
        await a.mesh.async_listen("127.0.0.1")
        a.mesh.connect("b", "127.0.0.1", port)
        await until(lambda: a.mesh.connected() == {"b"})
        assert first_pending == [True]  # linked while the first still hung
        await until(lambda: not waiting[0])  # and then the hung one was given up

    run_meshes(scenario)


def test_a_refused_dial_is_recorded_with_its_error_and_address() -> None:
    refusals.clear()

    async def refuse(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        raise ConnectionRefusedError(errno.ECONNREFUSED, "refused")

    async def scenario(meshes: Meshes) -> None:
        a = meshes.make("a", connect=refuse)
        await a.mesh.async_listen("127.0.0.1")
        a.mesh.connect("b", "127.0.0.1", 9)
        await until(lambda: any(r.count >= 2 for r in refusals.seen_refusals()))

    run_meshes(scenario)
    [seen] = refusals.seen_refusals()
    assert (seen.kind, seen.errno, seen.address) == ("connect", errno.ECONNREFUSED, "127.0.0.1")
    refusals.clear()
