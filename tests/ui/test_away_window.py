"""The real window of a laptop that slept (its lid closed for minutes) or moved: the first frame
after the fake clock jumps ten minutes ahead runs as any other, the table says the player was
away and then that they are back, or the window goes back to the menu, which says the table
ended meanwhile. Never a frozen window."""

from __future__ import annotations

import pytest

from nerts_lan.lan.whereabouts import ENDED_WHILE_AWAY
from nerts_lan.table.session import AddressChanged, Away, BackAtTable, Reconnected, TableGone
from tests.kit import piles
from tests.ui.conftest import Harness
from tests.ui.test_pause_banner import _table_with_a_say_in_pauses
from ui.lobby.lan import LanLobby
from ui.table.pause_banner import AWAY, BACK_AT_TABLE, MOVED, RECONNECTED

TEN_MINUTES = 600.0


def _said(screen: object) -> list[str]:
    return [shown.text for shown, _ in screen.hud.strip.lines]  # type: ignore[attr-defined]


def test_back_from_ten_minutes_asleep_the_table_says_so_and_plays_on(harness: Harness) -> None:
    screen, extra = _table_with_a_say_in_pauses(harness)
    extra.append(Away(TEN_MINUTES))
    assert harness.frame(TEN_MINUTES)  # the lid opens: one frame, ten minutes later, redrawn
    assert AWAY in _said(screen)
    extra.append(BackAtTable(TEN_MINUTES))
    harness.settle(0.2)
    assert _said(screen)[0] == BACK_AT_TABLE, _said(screen)
    area = screen.view.layout.own_area
    harness.click(*area.nerts.center)  # and the window answers: the ace goes up
    harness.settle(0.3)
    assert piles(screen.session.view)["nerts"] == ["5C"]
    assert harness.window.current is screen


def test_a_table_that_ended_while_asleep_goes_back_to_the_menu_saying_so(
    harness: Harness,
) -> None:
    _, extra = _table_with_a_say_in_pauses(harness)
    extra.append(Away(TEN_MINUTES))
    harness.frame(TEN_MINUTES)
    extra.append(TableGone(ENDED_WHILE_AWAY))
    harness.settle(0.2)
    menu = harness.window.current
    assert type(menu).__name__ == "MenuScreen"
    assert menu._message == ENDED_WHILE_AWAY
    assert ENDED_WHILE_AWAY in [item.text for item in menu.items if hasattr(item, "text")]


def test_a_laptop_that_moved_says_it_reconnects(harness: Harness) -> None:
    screen, extra = _table_with_a_say_in_pauses(harness)
    extra.append(AddressChanged("192.168.1.20", "192.168.1.57"))
    harness.settle(0.2)
    assert MOVED in _said(screen)
    extra.append(Reconnected("192.168.1.57", 2))
    harness.settle(0.2)
    assert _said(screen)[0] == RECONNECTED


class _SleepySession:
    """What the lobby asks of a LAN session, with the events a test hands it."""

    def __init__(self) -> None:
        self.events: list[object] = []
        self.dealt = False
        self.closed = False

    def poll(self, now: float) -> list[object]:
        events, self.events = self.events, []
        return events

    def start_error(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True


def test_a_lobby_whose_table_ended_while_asleep_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    lobby = LanLobby("127.0.0.1")
    monkeypatch.setattr(lobby, "_browse", lambda: None)
    session = _SleepySession()
    lobby.session = session  # type: ignore[assignment]
    session.events = [Away(TEN_MINUTES), TableGone(ENDED_WHILE_AWAY)]
    assert lobby.poll(0.0) is None
    assert lobby.session is None and session.closed
    assert lobby.problem == ENDED_WHILE_AWAY
