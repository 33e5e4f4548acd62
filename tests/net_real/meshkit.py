"""Helpers for the tests of the mesh and the node on 127.0.0.1.

``run_meshes(scenario)`` runs ``scenario(meshes)`` in a fresh event loop and always closes every
mesh it made (and whatever it registered with ``meshes.at_end``), pass or fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from net._mesh.handshake import Hello
from net._mesh.mesh import Mesh
from net._mesh.parts import MeshConfig, MeshListener
from tests.waiting import async_until

until = async_until  # the shared waiting helper, under the name these tests use


class TestMesh(Mesh):
    """A mesh with the few faults and disguises the tests need; the one place they touch the
    mesh's inside."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def cut(self, peer: str) -> None:
        """Drop the live connection to ``peer`` at once, as a Wi-Fi drop would."""
        connection = self._links[peer].connection
        assert connection is not None
        connection.abort()

    def stop_reading(self, peer: str) -> None:
        """Read nothing more from ``peer``: its sends pile up unacknowledged, as when a one-way
        cut drops what we would acknowledge them with."""
        connection = self._links[peer].connection
        assert connection is not None
        connection.writer.transport.pause_reading()

    def write_raw(self, peer: str, body: list[Any]) -> None:
        """Write a frame body of our making on the live connection to ``peer``."""
        connection = self._links[peer].connection
        assert connection is not None
        connection.write(body)

    def advertise(self, host: str, port: int) -> None:
        """Tell peers, in our hellos, that we listen at ``host:port`` (a proxy, say)."""
        self._roaming.listening_at(host, port)


class RecordingMesh(MeshListener):
    """A mesh whose received frames, ephemeral frames, links and problems are recorded.

    With ``explode``, its ephemeral handler raises on the payload ``b"boom"`` (a handler bug).
    ``options`` go to the ``MeshConfig`` (a table code, rate limits...).
    """

    def __init__(
        self,
        peer: str,
        incarnation: int = 0,
        protocol: int = 1,
        table: str = "t1",
        explode: bool = False,
        **options: Any,
    ) -> None:
        self.frames: list[tuple[str, bytes]] = []
        self.ephemeral: list[tuple[str, bytes]] = []
        self.connected: list[tuple[str, bool]] = []
        self.problems: list[tuple[str, str]] = []
        self.explode = explode
        hello = Hello(protocol, table, peer, peer.upper(), incarnation)
        self.mesh = TestMesh(hello, self, MeshConfig(max_frame=4096, **options))

    def frame_received(self, peer: str, data: bytes) -> None:
        self.frames.append((peer, data))

    def ephemeral_received(self, peer: str, data: bytes) -> None:
        if self.explode and data == b"boom":
            raise ValueError("a handler bug")
        self.ephemeral.append((peer, data))

    def link_up(self, hello: Hello, restarted: bool) -> None:
        self.connected.append((hello.peer, restarted))

    def problem(self, who: str, reason: str) -> None:
        self.problems.append((who, reason))


class Meshes:
    """The meshes of one scenario, closed together at its end."""

    def __init__(self) -> None:
        self._closers: list[Callable[[], Awaitable[None]]] = []

    def make(self, peer: str, **options: Any) -> RecordingMesh:
        """A new ``RecordingMesh`` (same arguments), closed at the end."""
        recording = RecordingMesh(peer, **options)
        self._closers.append(recording.mesh.async_close)
        return recording

    def keep(self, mesh: Mesh) -> Mesh:
        """Close ``mesh`` at the end too."""
        self._closers.append(mesh.async_close)
        return mesh

    def at_end(self, close: Callable[[], Awaitable[None]]) -> None:
        """Await ``close()`` at the end, before the meshes are closed."""
        self._closers.insert(0, close)

    async def async_close(self) -> None:
        for close in self._closers:
            await close()


def run_meshes(scenario: Callable[[Meshes], Awaitable[None]]) -> None:
    """Run ``scenario`` in a fresh event loop; close everything it made, pass or fail."""

    async def main() -> None:
        meshes = Meshes()
        try:
            await scenario(meshes)
        finally:
            await meshes.async_close()

    asyncio.run(main())


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def fake_peer(meshes: Meshes, handler: Handler, host: str = "127.0.0.1") -> int:
    """Listen on ``host`` with a peer written by hand (``handler`` answers each connection);
    its port. The mesh under test keeps dialing it (after a refusal, and while a dial is still
    pending), so a connection may still be in ``handler`` when the scenario ends: then every
    one is closed and its handler awaited (bounded), which ``server.wait_closed`` does not do
    before Python 3.12.1; a handler's read cut short by that close is no error."""
    answering: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        answering[task] = writer
        try:
            await handler(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the dialer gave up on this connection, or the scenario ended
        finally:
            writer.close()
            answering.pop(task, None)

    server = await asyncio.start_server(serve, host, 0)

    async def close() -> None:
        server.close()
        for writer in list(answering.values()):
            writer.close()
        if answering:
            await asyncio.wait(list(answering), timeout=5)
        await server.wait_closed()

    meshes.at_end(close)
    port: int = server.sockets[0].getsockname()[1]
    return port
