"""The network thread: work goes in from another thread, events come back in order."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from net.runtime import NetworkThread


def test_work_runs_in_the_loop_thread_and_events_come_back_in_order() -> None:
    network = NetworkThread()
    try:
        seen_threads: list[str] = []

        def produce(count: int) -> None:
            seen_threads.append(threading.current_thread().name)
            for i in range(count):
                network.post(i)

        network.call(produce, 100)

        async def answer() -> str:
            await asyncio.sleep(0.01)
            return threading.current_thread().name

        assert network.run(answer()) == "nerts-net"
        deadline = time.monotonic() + 5
        events: list[int] = []
        while len(events) < 100 and time.monotonic() < deadline:
            events.extend(network.drain())
        assert events == list(range(100))
        assert seen_threads == ["nerts-net"]
    finally:
        network.stop()
    assert not network._thread.is_alive()


def test_run_from_the_loop_itself_is_refused_rather_than_deadlocking() -> None:
    network = NetworkThread()
    try:

        async def nested() -> None:
            network.run(asyncio.sleep(0))

        with pytest.raises(RuntimeError, match="deadlock"):
            network.run(nested())
    finally:
        network.stop()
