"""A man in the middle for the mesh tests: a TCP proxy on 127.0.0.1 that may rewrite frames.

Frames from the dialer to the listener go through ``rule(connection, index, body)``, which
returns the frame bodies to forward in place of that one (none to drop it, two to replay it,
a changed one to alter it). ``connection`` counts the proxied connections from 1 and ``index``
the dialer's frames on that connection from 0. The other direction is forwarded untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Callable
from typing import Any

import msgpack

HEADER = struct.Struct(">I")
TAG_SIZE = 16
HANDSHAKE_FRAMES = 3
"""What a dialer writes before its first tagged frame: hello, key exchange, confirmation."""
DATA = 1

Rule = Callable[[int, int, bytes], list[bytes]]


def untouched(connection: int, index: int, body: bytes) -> list[bytes]:
    return [body]


def is_tagged_data(index: int, body: bytes) -> bool:
    """Whether ``body`` is a data frame with its tag, after the handshake of a coded table."""
    if index < HANDSHAKE_FRAMES:
        return False
    frame: Any = msgpack.unpackb(body[:-TAG_SIZE], raw=False)
    return isinstance(frame, list) and bool(frame) and frame[0] == DATA


class FrameProxy:
    """Listens on 127.0.0.1 and relays every connection to ``target_port`` there."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.rule: Rule = untouched
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _relay(self, dialer: asyncio.StreamReader, to_dialer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        try:
            listener, to_listener = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            to_dialer.close()
            return
        self._writers.update((to_dialer, to_listener))
        try:
            await asyncio.gather(
                self._frames(number, dialer, to_listener, to_dialer),
                self._bytes(listener, to_dialer, to_listener),
            )
        except asyncio.CancelledError:
            pass
        finally:
            self._writers.difference_update((to_dialer, to_listener))

    async def _frames(
        self,
        number: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        other: asyncio.StreamWriter,
    ) -> None:
        index = 0
        try:
            while True:
                (length,) = HEADER.unpack(await reader.readexactly(HEADER.size))
                body = await reader.readexactly(length)
                for forwarded in self.rule(number, index, body):
                    writer.write(HEADER.pack(len(forwarded)) + forwarded)
                index += 1
                await writer.drain()
        except (OSError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            other.close()

    async def _bytes(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        other: asyncio.StreamWriter,
    ) -> None:
        try:
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        except (OSError, ConnectionError):
            pass
        finally:
            writer.close()
            other.close()
