"""Fault injection for tests and benchmarks: a mesh whose ordered frames leave late.

Kept out of ``Mesh`` itself: the production adapter has no test hooks. A ``net.node.Node`` is
given one through its ``mesh_factory`` (``delayed_mesh(delay)``; the game's peers do when an
environment variable asks for a slow link, see ``nerts_lan.lan.agent``).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

from net._codec import KIND_DATA
from net._mesh.connection import Connection
from net._mesh.handshake import Hello
from net._mesh.link import QueuedFrame
from net._mesh.mesh import Mesh
from net._mesh.parts import MeshConfig, MeshListener
from net._mesh.parts import MeshLink as _Link

__all__ = ["DelayedMesh", "delayed_mesh"]


def delayed_mesh(delay: Callable[[], float]) -> Callable[[Hello, MeshListener, MeshConfig], Mesh]:
    """A ``Node``'s mesh factory: each ordered frame and datagram held back ``delay()`` seconds."""
    return lambda hello, listener, config: DelayedMesh(hello, listener, config, delay)


class DelayedMesh(Mesh):
    """A mesh that holds back each ordered frame it writes by ``delay()`` seconds, order kept
    (a frame is not written if its connection is gone or it was acknowledged meanwhile), and
    each datagram it sends by ``delay()`` too unless ``tcp_only`` (no order kept: datagrams
    may arrive out of order anyway)."""

    def __init__(
        self,
        me: Hello,
        listener: MeshListener,
        config: MeshConfig | None,
        delay: Callable[[], float],
        tcp_only: bool = False,
    ) -> None:
        super().__init__(me, listener, config)
        self._delay = delay
        if not tcp_only:
            self.datagrams.delay = delay
        self._held: weakref.WeakKeyDictionary[_Link, deque[_Held]] = weakref.WeakKeyDictionary()

    def _send_data(self, link: _Link, frame: QueuedFrame) -> None:
        loop = asyncio.get_running_loop()
        held = self._held.setdefault(link, deque())
        release = max(held[-1].release if held else 0.0, loop.time() + self._delay())
        held.append(_Held(release, link.connection, frame))
        if len(held) == 1:
            loop.call_at(release, self._write_late, link)
        self.datagrams.send(link, frame)

    def _write_late(self, link: _Link) -> None:
        """Write the frames of ``link`` whose time has come, in the order they were sent (one
        timer per link: the loop runs timers due at the same time in no set order)."""
        loop = asyncio.get_running_loop()
        held = self._held.get(link)
        while held and held[0].release <= loop.time():
            _, connection, frame = held.popleft()
            alive = connection is not None and link.connection is connection
            if alive and connection is not None and link.state.is_unacked(frame.seq):
                connection.write([KIND_DATA, frame.seq, frame.data])
        if held:
            loop.call_at(held[0].release, self._write_late, link)


class _Held(NamedTuple):
    release: float
    connection: Connection | None
    frame: QueuedFrame
