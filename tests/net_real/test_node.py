"""Ordering cores on real TCP sockets on 127.0.0.1: a group forms, agrees, survives a death."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from net._mesh.handshake import Hello
from net._order.core import CoreConfig, OrderingCore
from net.events import (
    EntriesStabilized,
    Event,
    MemberExcluded,
    MemberJoined,
    SnapshotInstalled,
    SnapshotRequested,
)
from net.node import Node
from tests.net_real.meshkit import until


def until_slow(condition: Callable[[], bool]) -> Coroutine[Any, Any, None]:
    """Group formation and exclusion take a few seconds: wait longer than for a link."""
    return until(condition, timeout=10.0)


CONFIG = CoreConfig(suspect_timeout=0.3, exclude_timeout=0.8)


class Peer:
    def __init__(self, peer_id: str, core: OrderingCore) -> None:
        self.stable: list[tuple[int, str, object]] = []
        self.events: list[Event] = []
        self.node = Node(
            core, Hello(1, "table", peer_id, peer_id, core.incarnation), on_events=self._events
        )

    def _events(self, events: list[Event]) -> None:
        self.events.extend(events)
        for event in events:
            if isinstance(event, EntriesStabilized):
                self.stable.extend((e.ts, e.peer, e.payload) for e in event.entries)
            elif isinstance(event, SnapshotRequested):
                snapshot = [[ts, peer, payload] for ts, peer, payload in self.stable]
                self.node.provide_snapshot(event.peer, event.stable_index, snapshot)
            elif isinstance(event, SnapshotInstalled):
                self.stable = [(ts, peer, payload) for ts, peer, payload in event.snapshot]


def test_a_group_forms_over_tcp_agrees_and_survives_a_dead_member() -> None:
    async def scenario() -> None:
        now = time.monotonic()
        host = Peer("a", OrderingCore("a", ["a"], now, CONFIG))
        port = await host.node.async_start("127.0.0.1")
        guests = [Peer(p, OrderingCore.joining(p, ["a"], now, CONFIG)) for p in ("b", "c")]
        for guest in guests:
            await guest.node.async_start("127.0.0.1")
            guest.node.contact("a", "127.0.0.1", port)
        peers = [host, *guests]
        try:
            await until_slow(
                lambda: all(len(p.node.core.members) == 3 and p.node.core.ready for p in peers)
            )
            assert sum(isinstance(e, MemberJoined) for e in host.events) == 2
            for round_ in range(20):
                for peer in peers:
                    peer.node.submit({"n": round_, "from": peer.node.core.peer_id})
                await asyncio.sleep(0.002)
            await until_slow(lambda: all(len(p.stable) == 60 for p in peers))
            assert host.stable == guests[0].stable == guests[1].stable
            # c's laptop dies: the others exclude it after the timeout and go on.
            await guests[1].node.async_close()
            await until_slow(
                lambda: all(any(isinstance(e, MemberExcluded) for e in p.events) for p in peers[:2])
            )
            host.node.submit("after")
            guests[0].node.submit("after too")
            await until_slow(lambda: len(host.stable) == 62 and len(guests[0].stable) == 62)
            assert host.stable == guests[0].stable
        finally:
            for peer in peers:
                await peer.node.async_close()

    asyncio.run(scenario())
