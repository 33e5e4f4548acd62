"""``doctor --listen`` and ``--probe`` on 127.0.0.1: a probe gets every answer and the listener
shows it; a closed port is refused, not dropped (also when the refusal is as slow as Windows');
a stranger's bytes get no answer and one clear line."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import sys
from collections.abc import Awaitable, Callable

from nerts_lan.doctor.checkup import async_network_checks, tcp_verdict
from nerts_lan.doctor.link import AT_ONCE, MAX_LINE, Heard, Listener, ProbeReport, async_probe
from tests.waiting import async_until

WINDOWS_REFUSAL = 2.1
"""Seconds Windows takes to refuse a closed port (it retries the SYN twice first)."""

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def _with_listener(
    scenario: Callable[[Listener, list[Heard]], Awaitable[None]],
) -> list[Heard]:
    heard: list[Heard] = []
    listener = Listener("127.0.0.1", 0, heard.append)
    await listener.async_start()
    try:
        await scenario(listener, heard)
    finally:
        await listener.async_close()
    return heard


def test_a_probe_gets_every_answer_and_the_listener_shows_each() -> None:
    reports: list[ProbeReport] = []

    async def scenario(listener: Listener, heard: list[Heard]) -> None:
        reports.append(await async_probe("127.0.0.1", listener.port, "127.0.0.1"))

    heard = asyncio.run(_with_listener(scenario))
    [report] = reports
    assert report.ok, report.report()
    assert [c.name for c in report.checks] == ["tcp", "udp", "mdns"]
    assert report.to_json()["advice"][0].startswith("All is well between these two laptops")
    assert {h.line() for h in heard} == {
        "TCP probe from 127.0.0.1: answered",
        "UDP probe from 127.0.0.1: answered",
    }


def test_a_closed_port_is_refused_and_the_advice_says_to_start_the_listener() -> None:
    port = _free_port()
    report = asyncio.run(async_probe("127.0.0.1", port, "127.0.0.1"))
    tcp, udp, _ = report.checks
    assert not tcp.ok and f"TCP port {port} at 127.0.0.1: refused" in tcp.detail
    assert not udp.ok
    if sys.platform != "win32":  # Wine passes no ICMP error on (Windows: a reset, refused too)
        assert "refused: nothing listens there" in udp.detail
    assert any(f"doctor --listen --port {port}" in line for line in report.to_json()["advice"])


def test_a_refusal_as_slow_as_windows_is_refused_not_dropped() -> None:
    async def slow_refusal(host: str, port: int) -> Streams:
        await asyncio.sleep(WINDOWS_REFUSAL)  # the input: how Windows answers a closed port
        raise ConnectionRefusedError(errno.ECONNREFUSED, "refused")

    async def scenario() -> tuple[str, str]:
        verdict, _ = await tcp_verdict("127.0.0.1", 9, slow_refusal)
        # The first TCP check is its own listener's (then any table's seen on 127.0.0.1).
        _, _, tcp = await async_network_checks("127.0.0.1", 0, slow_refusal)
        return verdict, tcp[0].detail

    verdict, detail = asyncio.run(scenario())
    assert verdict == "refused"
    assert "refused" in detail and "no answer" not in detail


def test_a_strangers_bytes_get_no_answer_and_one_clear_line() -> None:
    answers: list[bytes] = []

    async def scenario(listener: Listener, heard: list[Heard]) -> None:
        for sent in (b"GET / HTTP/1.1\r\n\r\n", b"nerts-lan doctor probe " + b"x" * 2000):
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(sent)
            answers.append(await asyncio.wait_for(reader.read(), 5))
            writer.close()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
            stranger.sendto(b"\xff" * 200, ("127.0.0.1", listener.port))
            await async_until(lambda: len(heard) == 3)
            stranger.setblocking(False)
            with contextlib.suppress(BlockingIOError):  # no answer, as it should be
                answers.append(stranger.recv(100))

    heard = asyncio.run(_with_listener(scenario))
    assert answers == [b"", b""]
    lines = [h.line() for h in heard]
    assert lines[0] == (
        "a stranger on TCP from 127.0.0.1: 16 bytes: GET / HTTP/1.1\\r\\n (ignored)"
    )
    assert lines[1] == f"a stranger on TCP from 127.0.0.1: over {MAX_LINE} bytes (ignored)"
    assert lines[2].startswith("a stranger on UDP from 127.0.0.1: 200+ bytes: \\xff")
    assert all(len(line) < 130 for line in lines), lines  # the first bytes only, escaped
    assert MAX_LINE < 200


def test_a_flood_of_connections_is_served_only_so_many_at_once() -> None:
    async def scenario(listener: Listener, heard: list[Heard]) -> None:
        held = [await asyncio.open_connection("127.0.0.1", listener.port) for _ in range(AT_ONCE)]
        await async_until(lambda: listener._serving == AT_ONCE)
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed unread at once
        writer.close()
        for _, held_writer in held:
            held_writer.close()
        await async_until(lambda: listener._serving == 0)

    heard = asyncio.run(_with_listener(scenario))
    assert f"over {AT_ONCE} connections at once" in heard[0].line()
