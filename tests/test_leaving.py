"""What asks a headless peer to leave (nerts_lan.headless.leaving), in this process: a ``leave``
line on a pipe, the pipe's end, and Windows' console events (their decision; the events themselves
come only from a real console). The real processes' goodbyes: tests/net_real/test_rejoin_events.py.
"""

from __future__ import annotations

import os
import threading

from nerts_lan.headless.leaving import CONSOLE_GRACE, LeaveRequest, closing_console_event
from tests.waiting import until


def _watching() -> tuple[LeaveRequest, int]:
    read, write = os.pipe()
    request = LeaveRequest()
    request.listen(stdin=read)
    return request, write


def _watchers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "leave-line"]


def test_a_leave_line_on_the_pipe_asks_the_peer_to_leave() -> None:
    request, write = _watching()
    try:
        os.write(write, b"lea")
        os.write(write, b"ve\n")  # a line may come in pieces
        until(lambda: request.requested, what="the leave request")
        assert request.reason == "leave on standard input"
    finally:
        request.left()
        os.close(write)
    until(lambda: not _watchers(), what="the watcher's end")


def test_the_pipes_end_and_other_lines_ask_nothing() -> None:
    request, write = _watching()
    os.write(write, b"stay\n\n")
    os.close(write)
    until(lambda: not _watchers(), what="the watcher's end")
    assert not request.requested
    request.left()


def test_react_lines_ask_for_reactions_of_the_peers_seat_and_nothing_else() -> None:
    from nerts_lan.rules.actions import React

    request, write = _watching()
    asked: list[React] = []
    os.write(write, b"react gg\nreact teleport\nreact nice\n")
    os.close(write)
    until(lambda: not _watchers(), what="the watcher's end")
    asked += request.reactions_for(("Ann",))
    assert asked == [React("Ann", "gg"), React("Ann", "nice")]  # an unknown one is ignored
    assert request.reactions_for(("Ann",)) == [] and not request.requested
    request.left()


def test_a_closing_windows_console_asks_for_a_leave_and_waits_for_it() -> None:
    """Windows ends the process once the handler returns: it returns only after the leave."""
    request = LeaveRequest()
    answered: list[bool] = []
    handler = threading.Thread(target=lambda: answered.append(request.on_console_event(2)))
    handler.start()
    until(lambda: request.requested, what="the leave request")
    assert request.reason == "console closed"
    assert not answered  # still waiting for the goodbye
    request.left()
    handler.join(CONSOLE_GRACE)
    assert answered == [True]


def test_ctrl_c_and_ctrl_break_go_on_to_pythons_own_handlers() -> None:
    request = LeaveRequest()
    assert request.on_console_event(0) is False  # Ctrl+C: KeyboardInterrupt
    assert request.on_console_event(1) is False  # Ctrl+Break: SIGBREAK
    assert not request.requested
    assert [closing_console_event(e) for e in (2, 5, 6)] == ["console closed", "logoff", "shutdown"]
