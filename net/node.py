"""One peer on a real network: the sans-IO ordering core driven by the TCP mesh and a clock.

The node owns nothing of the game. It feeds every frame the mesh receives into the core, sends
what the core wants sent, runs the core's timers at the times it asks for, and passes the core's
events to ``on_events``. It lives in one asyncio loop (see ``net.runtime``); every method must be
called from that loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from net._identity import PeerKey
from net._mesh.handshake import Hello
from net._mesh.mesh import CLOSE_GRACE, Mesh
from net._mesh.parts import DEFAULT_MAX_FRAME, MeshConfig, MeshListener
from net._order.core import OrderingCore
from net.events import Event, LogEntry, ProtocolViolated

__all__ = ["Node"]

log = logging.getLogger(__name__)

MeshFactory = Callable[[Hello, MeshListener, MeshConfig], Mesh]
"""What builds a node's mesh: ``Mesh`` itself, or a mesh that injects faults."""


class Node:
    """The ordering core of one peer, on real sockets."""

    def __init__(
        self,
        core: OrderingCore,
        hello: Hello,
        on_events: Callable[[list[Event]], None],
        on_link: Callable[[str, bool], None] = lambda peer, up: None,
        on_problem: Callable[[str, str], None] = lambda who, reason: None,
        clock: Callable[[], float] = time.monotonic,
        max_frame: int = DEFAULT_MAX_FRAME,
        mesh_factory: MeshFactory = Mesh,
        on_ephemeral: Callable[[str, bytes], None] = lambda peer, data: None,
        table_code: str | None = None,
        key: PeerKey | None = None,
        before_send: Callable[[OrderingCore], None] = lambda core: None,
        datagrams: bool = True,
        on_moved: Callable[[str, str], None] = lambda old, new: None,
    ) -> None:
        """``on_link(peer, up)`` tells when a TCP link comes up or goes down (a vanished peer is
        noticed by the core's own timers too); ``on_problem(who, reason)`` reports a connection
        closed for a protocol problem; ``on_ephemeral(peer, data)`` hands over a best-effort
        frame from a linked peer (outside the ordered log, see ``broadcast_ephemeral``);
        ``table_code``: link only with peers that know it, every frame authenticated (see
        ``net._mesh.mesh``); ``key``: our peer key (``hello.peer`` its id), proven in every
        handshake, and links only with peers that prove theirs. ``before_send(core)`` runs after
        each call into the core, before the frames it wants sent go out: the place to keep what
        must survive a crash (the core's ``vote_record()``, before anyone hears the vote) and to
        notice ``core.paused``. ``on_moved(old, new)``: our address changed (see
        ``MeshListener.address_changed``). ``mesh_factory``: builds the mesh from the hello, the
        listener and the config (a test's or benchmark's fault-injecting mesh, see
        ``net.testing.delayed_mesh``). ``datagrams``:
        send small frames by UDP datagram too (``MeshConfig.datagrams``; off: TCP alone)."""
        self.core = core
        self.clock = clock
        self._on_events = on_events
        self._on_problem = on_problem
        self._before_send = before_send
        listener = _NodeListener(self._frame, on_link, on_problem, on_moved, on_ephemeral)
        config = MeshConfig(
            max_frame=max_frame, table_code=table_code, key=key, datagrams=datagrams
        )
        self.mesh = mesh_factory(hello, listener, config)
        self._wake = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None
        self._closed = False

    async def async_start(self, host: str, port: int = 0) -> int:
        """Listen on ``host:port`` and start the timers; the port listened on."""
        listened = await self.mesh.async_listen(host, port)
        self._timer = asyncio.ensure_future(self._run_timers())
        self._flush()
        return listened

    @property
    def closed(self) -> bool:
        """``async_close`` was called."""
        return self._closed

    def contact(self, peer: str, host: str, port: int) -> None:
        """Keep a link to a member whose address is known (the host, found over mDNS)."""
        self.mesh.connect(peer, host, port)
        self._flush()

    def submit(self, payload: Any) -> LogEntry:
        """Order a local payload; it is sent to every member."""
        entry = self.core.submit(payload, self.clock())
        self._flush()
        return entry

    def broadcast_ephemeral(self, data: bytes) -> int:
        """Write ``data`` (at most ``MAX_EPHEMERAL`` bytes) to every peer linked now, outside the
        ordered log: never queued, never resent. The number of peers it was written to."""
        return sum(self.mesh.send_ephemeral(peer, data) for peer in sorted(self.mesh.connected()))

    def report_state_hash(self, stable_index: int, digest: bytes) -> None:
        self._deliver(self.core.report_state_hash(stable_index, digest))

    def provide_snapshot(self, peer: str, stable_index: int, snapshot: Any) -> None:
        self.core.provide_snapshot(peer, stable_index, snapshot)
        self._flush()

    def leave(self) -> None:
        """Tell the group we leave on purpose (they need not wait for a timeout)."""
        self.core.leave(self.clock())
        self._flush()

    async def async_drain(self, timeout: float) -> bool:
        """Wait, ``timeout`` seconds at most, until every peer linked now has acknowledged all
        we sent it (a leave notice the link lost is resent meanwhile, and the notice's ``seen``
        is what tells the last members that the final entries are stable); True if all did."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout  # the loop's clock: an injected one may stand still
        while True:
            waiting = [peer for peer in self.mesh.connected() if self.mesh.queued(peer)]
            if not waiting:
                return True
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.01)

    async def async_close(self) -> None:
        """Stop the timers and close the mesh; bounded, whatever the network does."""
        self._closed = True
        self._wake.set()  # the timer loop ends even if its cancel were swallowed on the way
        if self._timer is not None:
            self._timer.cancel()
            _, pending = await asyncio.wait({self._timer}, timeout=CLOSE_GRACE)
            if pending:
                log.warning("closing the node: its timer task did not end")
            elif not self._timer.cancelled():
                self._timer.result()  # a timer that failed says so, as it always did
        await self.mesh.async_close()

    # --- helpers -------------------------------------------------------------------------------

    def _frame(self, peer: str, data: bytes) -> None:
        self._deliver(self.core.receive(peer, data, self.clock()))

    def _deliver(self, events: list[Event]) -> None:
        self._flush()
        if events:
            for event in events:
                if isinstance(event, ProtocolViolated):
                    self._on_problem(event.peer, f"{event.field}: {event.reason}")
                    # The core ignores that peer from now on: stop reading what it sends too.
                    self.mesh.forget(event.peer)
            self._on_events(events)
            self._flush()

    def _flush(self) -> None:
        self._before_send(self.core)
        for dest, data in self.core.outgoing():
            self.mesh.send(dest, data)
        self._wake.set()

    async def _run_timers(self) -> None:
        while not self._closed:
            due = self.core.next_timer()
            self._wake.clear()
            if due is None:
                await self._wake.wait()
                continue
            delay = due - self.clock()
            if delay > 0:
                # Not asyncio.wait_for: before Python 3.12 it swallows a cancellation that comes
                # as the event is set, and then closing the node waits for this task forever.
                alarm = asyncio.get_running_loop().call_later(delay, self._wake.set)
                try:
                    await self._wake.wait()
                finally:
                    alarm.cancel()
                continue
            self._deliver(self.core.tick(self.clock()))
            await asyncio.sleep(0)  # let frames in; never spin on a timer that stays due


class _NodeListener(MeshListener):
    """Hands what the mesh hears to the node's callables: each frame (``on_frame``, into the
    core), links up and down, problems, our address moving, ephemeral frames."""

    def __init__(
        self,
        on_frame: Callable[[str, bytes], None],
        on_link: Callable[[str, bool], None],
        on_problem: Callable[[str, str], None],
        on_moved: Callable[[str, str], None],
        on_ephemeral: Callable[[str, bytes], None],
    ) -> None:
        self._on_frame = on_frame
        self._on_link = on_link
        self._on_problem = on_problem
        self._on_moved = on_moved
        self._on_ephemeral = on_ephemeral

    def frame_received(self, peer: str, data: bytes) -> None:
        self._on_frame(peer, data)

    def ephemeral_received(self, peer: str, data: bytes) -> None:
        self._on_ephemeral(peer, data)

    def link_up(self, hello: Hello, restarted: bool) -> None:
        self._on_link(hello.peer, True)

    def link_down(self, peer: str) -> None:
        self._on_link(peer, False)

    def problem(self, who: str, reason: str) -> None:
        self._on_problem(who, reason)

    def address_changed(self, old: str, new: str) -> None:
        self._on_moved(old, new)
