"""Strangers on the Wi-Fi, over real sockets on 127.0.0.0/8 (each stranger from a source
address of its own): code guessers, idle hellos, slow frames, key exchange floods, forged
refusals, and what a coded listener says before the dialer proves the code.

Only outcomes are asserted (who linked, what was closed, how many descriptors were open), never
how long anything took. The bookkeeping itself is tested in simulated time in
tests/net/test_strangers.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable

import msgpack
import pytest

from net._mesh.handshake import WRONG_CODE
from tests.leaks import open_sockets
from tests.net_real.meshkit import Meshes, RecordingMesh, fake_peer, run_meshes, until
from tests.net_real.strangerkit import dial, frame, guess_forever, hello, read_frame

CODE = "7 tigers"
LONG_PENALTY = 30.0
"""Longer than any test: on a mesh-wide gate, one wrong guess would lock everyone out."""


def reasons(node: RecordingMesh) -> list[str]:
    return [reason for _, reason in node.problems]


def spawn(meshes: Meshes, work: Awaitable[None]) -> asyncio.Task[None]:
    task = asyncio.ensure_future(work)

    async def stop() -> None:
        while not task.done():  # asyncio.wait_for may swallow one cancellation (before 3.12)
            task.cancel()
            await asyncio.wait([task], timeout=0.1)
        with contextlib.suppress(asyncio.CancelledError, Exception):
            task.result()

    meshes.at_end(stop)
    return task


def open_descriptors() -> int:
    """The host's descriptors (Linux), or its open sockets where there is no /proc (Windows:
    its handles are not descriptors)."""
    if sys.platform.startswith("linux"):
        return len(os.listdir("/proc/self/fd"))
    return open_sockets()


def test_guessers_at_twenty_addresses_hold_back_neither_a_joiner_nor_a_returning_member() -> None:
    """Twenty guessers, each from an address of its own, keep guessing; each wrong guess holds
    back its own address for 30 s. A joiner with the right code still links, and so does a
    member whose link blinked."""

    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a", table_code=CODE, wrong_code_delay=LONG_PENALTY)
        port = await host.mesh.async_listen("127.0.0.1")
        member = meshes.make("member", table_code=CODE)
        member.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: host.mesh.connected() == {"member"})
        host.mesh.send("member", b"welcome")  # a member: the host writes to it
        outcomes: list[str] = []
        for i in range(20):
            source = f"127.0.0.{i + 2}"
            spawn(meshes, guess_forever("127.0.0.1", port, source, f"g{i}", outcomes))
        await until(lambda: len(outcomes) >= 20, timeout=15, what="a guess from each")
        joiner = meshes.make("joiner", table_code=CODE)
        joiner.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: "joiner" in host.mesh.connected(), timeout=15, what="the joiner")
        member.mesh.cut("a")
        await until(lambda: len(member.connected) == 2, timeout=15, what="the member back")
        host.mesh.send("member", b"welcome back")
        await until(lambda: len(member.frames) == 2)
        assert len(outcomes) > 20 and "linked" not in outcomes  # they kept guessing, in vain
        assert not joiner.problems and not member.problems

    run_meshes(scenario)


def test_idle_hellos_from_many_addresses_are_bounded_and_a_member_gets_back_in() -> None:
    """A process opens 60 connections from each of 10 addresses, each saying a valid hello with
    a new peer id and then nothing, and opens them again as they close. The host's descriptors
    stay bounded, every idle hello is closed, and a member whose link blinked gets back in."""

    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a", stranger_timeout=1.0)
        port = await host.mesh.async_listen("127.0.0.1")
        member = meshes.make("member")
        member.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: host.mesh.connected() == {"member"})
        host.mesh.send("member", b"welcome")
        baseline = open_descriptors()
        sources = ",".join(f"127.0.1.{i}" for i in range(1, 11))
        flood = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "tests.net_real.strangerkit", "idle", "127.0.0.1"],
            str(port),
            f"--sources={sources}",
            "--count=60",
            stdout=asyncio.subprocess.PIPE,
        )
        report = {"opened": 0, "closed": 0}
        highest = 0

        async def stop() -> None:
            flood.kill()
            await flood.wait()

        meshes.at_end(stop)

        def flooding(opened: int, closed: int) -> bool:
            nonlocal highest
            highest = max(highest, open_descriptors())
            return report["opened"] >= opened and report["closed"] >= closed

        async def read_reports() -> None:
            assert flood.stdout is not None
            async for line in flood.stdout:
                report.update(json.loads(line))

        spawn(meshes, read_reports())
        await until(lambda: flooding(600, 0), timeout=20, what="600 idle hellos")
        member.mesh.cut("a")
        await until(lambda: len(member.connected) == 2 and flooding(600, 0), timeout=15)
        host.mesh.send("member", b"welcome back")
        await until(lambda: len(member.frames) == 2 and flooding(0, 0))
        await until(lambda: flooding(1200, 600), timeout=20, what="idle hellos closed")
        # The stranger pool, and a few accept queues (16 each) of connections being turned away
        # (how many depends on how busy the loop is: 3 when idle, up to 5 seen on a loaded one).
        assert highest <= baseline + 64 + 10 * 16
        assert host.connected == [("member", False), ("member", False)]  # no idle hello linked

    run_meshes(scenario)


@pytest.mark.parametrize("slowness", ["trickle", "stall"])
def test_a_frame_trickled_or_stalled_after_the_hello_is_cut_off(slowness: str) -> None:
    """A member's link (its peer id is known) that begins a frame and then trickles it a byte
    at a time, or stops in the middle, is closed; an idle link between members is not."""

    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a", frame_timeout=0.5, stranger_timeout=0.5)
        port = await host.mesh.async_listen("127.0.0.1")
        friend = meshes.make("friend", frame_timeout=0.5, stranger_timeout=0.5)
        friend.mesh.connect("a", "127.0.0.1", port)
        host.mesh.send("slow", b"you are a member")  # the host knows "slow"
        await until(lambda: host.mesh.connected() == {"friend"})
        reader, writer = await dial("127.0.0.1", port, "127.0.0.9")
        meshes.at_end(_closer(writer))
        writer.write(frame(hello("slow")))
        assert (await read_frame(reader))[3] == "a"  # the host's hello
        await until(lambda: "slow" in host.mesh.connected())
        data = msgpack.packb([1, 1, b"x" * 100])
        writer.write(frame([2, 0]) + len(data).to_bytes(4, "big") + data[:10])  # ack, half a frame
        closed = asyncio.ensure_future(_until_closed(reader))
        for byte in data[10:]:
            if closed.done() or slowness == "stall":
                break
            writer.write(bytes([byte]))
            await asyncio.sleep(0.05)
        await asyncio.wait_for(closed, 10)
        await until(lambda: "slow" not in host.mesh.connected())
        assert any("took over 0.5 s" in reason for reason in reasons(host))
        assert host.mesh.connected() == {"friend"}  # idle all along, and kept
        assert host.connected == [("friend", False), ("slow", False)]

    run_meshes(scenario)


def test_one_address_gets_a_burst_of_key_exchanges_then_its_rate() -> None:
    """Forty connections at once from one address, each saying a coded hello: only the burst
    (and what the rate adds meanwhile) get a key exchange message; another address still gets
    its own."""

    async def scenario(meshes: Meshes) -> None:
        limits = {"handshake_burst": 5.0, "handshakes_per_second": 1.0}
        host = meshes.make("a", table_code=CODE, **limits)
        port = await host.mesh.async_listen("127.0.0.1")
        started = time.monotonic()
        answers = await asyncio.gather(*(_key_exchange(port, "127.0.0.20", i) for i in range(40)))
        elapsed = time.monotonic() - started
        assert sum(answers) <= 5 + 1.0 * elapsed + 1
        assert await _key_exchange(port, "127.0.0.21", 0)

    run_meshes(scenario)


@pytest.mark.parametrize("when", ["for a hello", "for a key exchange"])
def test_a_wrong_code_refusal_before_the_code_check_is_not_believed(when: str) -> None:
    """Someone at the host's address answers "wrong table code" before any code was checked:
    the joiner does not report a wrong code (which would stop it), and keeps dialing."""

    async def scenario(meshes: Meshes) -> None:
        dialed = 0

        async def forger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal dialed
            dialed += 1
            await read_frame(reader)  # the joiner's hello
            if when == "for a key exchange":
                writer.write(frame([0, 1, "t1", "spake2"]))
            writer.write(frame([3, WRONG_CODE]))
            await writer.drain()

        port = await fake_peer(meshes, forger)
        joiner = meshes.make("joiner", table_code=CODE)
        joiner.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: dialed >= 3 and len(joiner.problems) >= 2)
        assert WRONG_CODE not in reasons(joiner)
        assert all("not believed" in reason for reason in reasons(joiner))

    run_meshes(scenario)


def test_a_coded_listener_names_no_one_before_the_dialer_proves_the_code() -> None:
    """Whoever dials a coded table learns its protocol, table and scheme, and nothing of the
    peer who listens: not its peer id, name, incarnation or port."""

    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("ann-laptop", table_code=CODE)
        port = await host.mesh.async_listen("127.0.0.1")
        reader, writer = await dial("127.0.0.1", port, "127.0.0.30")
        meshes.at_end(_closer(writer))
        writer.write(frame(hello("nosy", coded=True)))
        first = await read_frame(reader)
        assert first == [0, 1, "t1", "spake2"]
        said = msgpack.packb(first)
        for secret in (b"ann-laptop", b"ANN-LAPTOP", port.to_bytes(2, "big")):
            assert secret not in said

    run_meshes(scenario)


async def _key_exchange(port: int, source: str, index: int) -> bool:
    """Whether a coded hello from ``source`` is answered with a key exchange message."""
    reader, writer = await dial("127.0.0.1", port, source)
    try:
        writer.write(frame(hello(f"flood{index}", coded=True)))
        await read_frame(reader)  # the veiled hello
        return bool((await asyncio.wait_for(read_frame(reader), 5))[0] == 6)
    except (asyncio.IncompleteReadError, ConnectionError):
        return False
    finally:
        writer.close()


async def _until_closed(reader: asyncio.StreamReader) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while await reader.read(4096):
            pass


def _closer(writer: asyncio.StreamWriter) -> Callable[[], Awaitable[None]]:
    async def close() -> None:
        writer.close()

    return close
