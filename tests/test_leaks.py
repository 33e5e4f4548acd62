"""The leak guard itself (tests/leaks.py): the platform's own loop, sockets seen without /proc."""

from __future__ import annotations

import asyncio
import socket

import pytest

from tests import leaks
from tests.leaks import no_leaks


def test_the_guard_runs_tests_on_the_platforms_own_loop() -> None:
    """Players on Windows get the proactor loop: the tests must too, not the selector loop."""
    expected = type(asyncio.DefaultEventLoopPolicy().new_event_loop())

    async def running() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    loop = asyncio.run(running())
    assert isinstance(loop, expected)
    assert isinstance(loop, leaks._CheckingLoop)


def test_a_socket_left_open_is_named_where_there_is_no_proc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where there is no /proc (Windows), the guard counts socket objects: one left open fails
    the test, one closed does not."""
    monkeypatch.setattr(socket.socket, "__init__", socket.socket.__init__)  # restored after
    leaks._note_sockets_made()
    monkeypatch.setattr(leaks, "_HAS_PROC", False)
    monkeypatch.setattr(leaks, "_WIND_DOWN", 0.2)
    with no_leaks():
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
    left = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        with pytest.raises(AssertionError, match="1 socket"), no_leaks():
            kept = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    finally:
        kept.close()
        left.close()
