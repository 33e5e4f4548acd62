"""A stranger asks a mesh which table listens on its port, over real sockets on 127.0.0.0/8: the
answer is the protocol, the table and the properties the application set, and nothing else; a
table's code is never in it; a listener with nothing set, something that is no mesh, nothing
listening, silence and a flood from one address each end in their own plain error.

Only outcomes are asserted, never how long anything took. The bookkeeping (token buckets per
address) is the one of the key exchanges, tested in simulated time in tests/net/test_strangers.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import msgpack
import pytest

from net import (
    Described,
    ForeignAnswer,
    NoAnswer,
    NothingDescribed,
    NothingListening,
    async_describe,
)
from net._codec import KIND_DESCRIBE
from tests.net_real.meshkit import Meshes, run_meshes, until
from tests.net_real.strangerkit import dial, frame, read_frame

PROPERTIES = {"v": "2", "name": "Kitchen", "host": "ann-1", "seats": "1/4", "code": "1"}
CODE = "K7PX"


async def ask(port: int, source: str | None = None) -> Any:
    """The body a raw describe request from ``source`` gets back (None: closed unanswered)."""
    reader, writer = await dial("127.0.0.1", port, source)
    try:
        writer.write(frame([KIND_DESCRIBE, 1]))
        return await read_frame(reader)
    except asyncio.IncompleteReadError:
        return None
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def test_a_described_mesh_answers_with_its_table_and_properties_and_links_nobody() -> None:
    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a", table="t9", protocol=2)
        port = await host.mesh.async_listen("127.0.0.1")
        host.mesh.description.set(PROPERTIES)
        raw = await ask(port)
        assert raw == [KIND_DESCRIBE, 2, "t9", PROPERTIES]
        described = await async_describe("127.0.0.1", port)
        assert described == Described("127.0.0.1", port, 2, "t9", PROPERTIES)
        by_name = await async_describe("localhost", port)  # a host name, resolved to IPv4
        assert by_name.address == "127.0.0.1" and by_name.table == "t9"
        assert host.connected == [] and host.problems == []
        # A member links as ever afterwards.
        member = meshes.make("b", table="t9", protocol=2)
        await member.mesh.async_listen("127.0.0.1")
        member.mesh.connect("a", "127.0.0.1", port)
        member.mesh.send("a", b"hello")
        await until(lambda: host.frames == [("b", b"hello")], what="the member's frame")

    run_meshes(scenario)


def test_a_coded_table_is_described_without_its_code_and_still_checks_it() -> None:
    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a", table_code=CODE, wrong_code_delay=0.0)
        port = await host.mesh.async_listen("127.0.0.1")
        host.mesh.description.set(PROPERTIES)
        reader, writer = await dial("127.0.0.1", port, None)
        writer.write(frame([KIND_DESCRIBE, 1]))
        raw = await reader.read()  # everything the listener says, until it closes
        writer.close()
        assert CODE.encode() not in raw
        length = int.from_bytes(raw[:4], "big")
        assert msgpack.unpackb(raw[4 : 4 + length])[3]["code"] == "1"  # "needs a code", only
        wrong = meshes.make("b", table_code="WRONG", wrong_code_delay=0.0)
        wrong.mesh.connect("a", "127.0.0.1", port)
        await until(lambda: wrong.problems, what="the wrong code refused")
        assert wrong.connected == []
        right = meshes.make("c", table_code=CODE, wrong_code_delay=0.0)
        right.mesh.connect("a", "127.0.0.1", port)
        right.mesh.send("a", b"in")
        await until(lambda: ("c", b"in") in host.frames, what="the right code linked")

    run_meshes(scenario)


def test_a_mesh_with_nothing_set_says_so() -> None:
    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a")
        port = await host.mesh.async_listen("127.0.0.1")
        with pytest.raises(NothingDescribed, match="describes no table"):
            await async_describe("127.0.0.1", port)
        host.mesh.description.set(PROPERTIES)
        assert (await async_describe("127.0.0.1", port)).properties == PROPERTIES
        host.mesh.description.set(None)  # withdrawn
        with pytest.raises(NothingDescribed):
            await async_describe("127.0.0.1", port)

    run_meshes(scenario)


def test_one_address_asking_too_often_is_cut_off_and_no_other() -> None:
    async def scenario(meshes: Meshes) -> None:
        host = meshes.make("a")
        port = await host.mesh.async_listen("127.0.0.1")
        host.mesh.description.set(PROPERTIES)
        answers = [await ask(port, "127.0.3.1") for _ in range(30)]
        assert answers[0] is not None and None in answers  # the burst, then silence
        assert sum(a is not None for a in answers) < 30
        assert await ask(port, "127.0.3.2") is not None  # another laptop is answered

    run_meshes(scenario)


def test_nothing_listening_silence_and_foreign_programs_are_told_apart() -> None:
    async def scenario(meshes: Meshes) -> None:
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            free = unused.getsockname()[1]
        with pytest.raises(NothingListening, match=f"nothing is listening at 127.0.0.1:{free}"):
            await async_describe("127.0.0.1", free)

        connections: list[asyncio.StreamWriter] = []

        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connections.append(writer)

        async def chatty(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"SSH-2.0-OpenSSH_9.2\r\n")
            connections.append(writer)

        async def huge(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write((1 << 30).to_bytes(4, "big"))
            connections.append(writer)

        for handler, error, match in (
            (silent, NoAnswer, "did not answer"),
            (chatty, ForeignAnswer, "something else than a table"),
            (huge, ForeignAnswer, "something else than a table"),
        ):
            server = await asyncio.start_server(handler, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            try:
                with pytest.raises(error, match=match):
                    await async_describe("127.0.0.1", port, timeout=0.3)
            finally:
                for writer in connections:
                    writer.close()
                connections.clear()
                server.close()
                await server.wait_closed()

    run_meshes(scenario)


def test_a_describe_request_from_a_listener_does_not_confuse_a_dialer() -> None:
    """Only a listener answers: a dialer that gets a describe request instead of a hello closes
    the connection as a protocol breach."""

    async def scenario(meshes: Meshes) -> None:
        accepted: list[asyncio.StreamWriter] = []

        async def asker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(frame([KIND_DESCRIBE, 1]))
            accepted.append(writer)

        server = await asyncio.start_server(asker, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        dialer = meshes.make("b")
        dialer.mesh.description.set(PROPERTIES)
        try:
            dialer.mesh.connect("a", "127.0.0.1", port)
            await until(lambda: dialer.problems, what="the dialer's complaint")
            assert "malformed hello" in dialer.problems[0][1]
        finally:
            dialer.mesh.forget("a")
            for writer in accepted:
                writer.close()
            server.close()
            await server.wait_closed()

    run_meshes(scenario)
