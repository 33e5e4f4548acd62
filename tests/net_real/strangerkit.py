"""Strangers for the transport tests: code guessers, idle hellos, slow frames, forged refusals.

Each opens plain TCP connections, from a source address of its own when asked (any 127.0.0.0/8
address works on Linux loopback; in network namespaces, the host's own), and speaks the mesh's
framing by hand. ``python3 -m tests.net_real.strangerkit ...`` runs a flood or guessers in a
process of their own (see ``main``), printing one JSON line per report.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import struct
from typing import Any

import msgpack

from net._mesh.connection import Connection, authenticate
from net._mesh.handshake import Hello, hello_body
from net._mesh.strangers import CodeCheckGates

HEADER = struct.Struct(">I")


def frame(body: object) -> bytes:
    data = msgpack.packb(body)
    return HEADER.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader) -> Any:
    (length,) = HEADER.unpack(await reader.readexactly(HEADER.size))
    return msgpack.unpackb(await reader.readexactly(length))


async def dial(host: str, port: int, source: str | None) -> tuple[Any, asyncio.StreamWriter]:
    local = (source, 0) if source is not None else None
    return await asyncio.open_connection(host, port, local_addr=local)


def hello(peer: str, table: str = "t1", coded: bool = False) -> list[Any]:
    return hello_body(Hello(1, table, peer, peer.upper(), 0), 0, None, None, coded)


async def guess_once(host: str, port: int, source: str | None, peer: str, code: str) -> str:
    """One coded handshake with a wrong ``code``; how it ended (the error's text)."""
    reader, writer = await dial(host, port, source)
    connection = Connection(reader, writer, "host", 4096)
    try:
        mine = connection.write(hello(peer, coded=True))
        theirs = await connection.read_handshake_raw()  # the veiled hello, or (before) the whole
        gates = CodeCheckGates(0.0, asyncio.get_running_loop().time)
        await authenticate(connection, code, "t1", gates.of("host", True), True, (mine, theirs))
        return "linked"
    except Exception as error:
        return str(error) or type(error).__name__
    finally:
        connection.abort()


async def guess_forever(
    host: str, port: int, source: str | None, name: str, outcomes: list[str]
) -> None:
    """Guess codes from ``source`` one after another, noting how each guess ended."""
    for attempt in range(1_000_000):
        outcomes.append(await guess_once(host, port, source, name, f"guess {attempt}"))
        await asyncio.sleep(0.2)


async def idle_hellos(
    host: str, port: int, source: str, count: int, report: dict[str, int], table: str = "t1"
) -> None:
    """Keep ``count`` connections from ``source`` open, each saying a valid hello with a new
    peer id and then nothing; a closed one is opened again. Counts opened and closed ones."""

    async def one(slot: int) -> None:
        for attempt in range(1_000_000):
            try:
                reader, writer = await dial(host, port, source)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            report["opened"] += 1
            writer.write(frame(hello(f"idle-{source}-{slot}-{attempt}", table)))
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while await reader.read(4096):
                    pass  # whatever the host says; we say nothing more
            report["closed"] += 1
            writer.close()
            await asyncio.sleep(0.05)

    await asyncio.gather(*(one(slot) for slot in range(count)))


async def _main(arguments: argparse.Namespace) -> None:
    report = {"opened": 0, "closed": 0}
    outcomes: list[str] = []
    sources: list[str | None] = [s or None for s in arguments.sources.split(",")]
    host, port, count = arguments.host, arguments.port, arguments.count
    if arguments.role == "idle":
        work = [idle_hellos(host, port, s or "0.0.0.0", count, report) for s in sources]
    else:
        work = [
            guess_forever(host, port, s, f"guesser{i}-{s}", outcomes)
            for s in sources
            for i in range(count)
        ]
    tasks = [asyncio.ensure_future(w) for w in work]
    while True:
        await asyncio.sleep(0.1)
        wrong = sum(outcome == "wrong table code" for outcome in outcomes)
        print(json.dumps({**report, "guesses": len(outcomes), "wrong": wrong}), flush=True)
        for task in tasks:
            if task.done():
                task.result()  # a stranger that broke down says why


def main() -> None:
    """``idle HOST PORT --sources A,B --count N`` or ``guess HOST PORT --sources A --count N``;
    runs until killed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=["idle", "guess"])
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--sources", default="", help="source addresses (none: the default)")
    parser.add_argument("--count", type=int, default=1)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
