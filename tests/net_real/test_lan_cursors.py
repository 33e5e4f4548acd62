"""Pointers between two LAN sessions on 127.0.0.1: ephemeral, checked, about 30 a second."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from nerts_lan.lan.advert import LanOptions, TableInfo
from nerts_lan.lan.cursor import encode_cursor
from nerts_lan.lan.seat import LanSession
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.session import CursorMoved
from tests.waiting import until


def _pump(sessions: list[LanSession], condition: Callable[[], bool], timeout: float = 10.0) -> None:
    def wait_a_little() -> None:
        for session in sessions:
            session.wait(0.01)

    until(condition, timeout, what="the pointers", step=0, between=wait_a_little)


def test_a_pointer_from_one_session_shows_at_the_other_and_forgeries_do_not() -> None:
    host = LanSession.host(
        LanOptions("Ann", "ann-1", interface="127.0.0.1"), TableSettings("Pointers")
    )
    guest: LanSession | None = None
    seen: dict[str, list[Any]] = {"host": [], "guest": []}

    def poll() -> None:
        seen["host"].extend(host.poll())
        if guest is not None:
            seen["guest"].extend(guest.poll())

    try:
        status = host.status
        table = TableInfo(
            status.table_id, "Pointers", status.peer_id, "Ann", "singles", 1, 4, "lobby", 1,
            "127.0.0.1", status.port,
        )  # fmt: skip
        guest = LanSession.join(LanOptions("Bo", "bo-1", interface="127.0.0.1"), table)
        sessions = [host, guest]

        def both_seated() -> bool:
            poll()
            return all(s.lobby is not None and len(s.lobby.seats) == 2 for s in sessions)

        _pump(sessions, both_seated)
        assert host.local_players == ("Ann",) and guest.local_players == ("Bo",)

        # A forgery first (Bo's laptop speaking for Ann), then junk, then the real thing.
        guest.forge_ephemeral(encode_cursor("Ann", 0.5, 0.5, ()))
        guest.forge_ephemeral(b"\x93\x01\x02\x03")
        guest.forge_ephemeral(encode_cursor("Bo", 1.5, 0.5, ()))
        guest.send_cursor("Bo", 0.25, 0.75, ("KS", "QH"))

        def arrived() -> bool:
            poll()
            return any(isinstance(e, CursorMoved) for e in seen["host"])

        # One link is first in, first out: the forgeries, sent before the real pointer, would
        # have been handed on before it, so they would be in what was polled by now.
        _pump(sessions, arrived)
        poll()
        cursors = [e for e in seen["host"] if isinstance(e, CursorMoved)]
        assert cursors == [CursorMoved("Bo", 0.25, 0.75, ("KS", "QH"))]
        assert not any(isinstance(e, CursorMoved) for e in seen["guest"])  # no echo

        # A burst of 60 moves within a few milliseconds: about one goes at once, the latest one
        # goes on its turn (from poll), and nothing floods the table.
        seen["host"].clear()
        for i in range(60):
            guest.send_cursor("Bo", i / 100, 0.5, ())
        start = time.monotonic()

        def latest_arrived() -> bool:
            poll()
            return any(isinstance(e, CursorMoved) and e.x == 0.59 for e in seen["host"])

        _pump(sessions, latest_arrived)
        assert time.monotonic() - start < 1.0
        burst = [e for e in seen["host"] if isinstance(e, CursorMoved)]
        assert 1 <= len(burst) <= 3
        assert burst[-1] == CursorMoved("Bo", 0.59, 0.5, ())
    finally:
        if guest is not None:
            guest.close()
        host.close()
