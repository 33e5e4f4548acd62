"""The real window at a table that pauses: "Waiting for the table…" across the top while the
session says the table is paused (``TablePaused``), gone when it is back, and play goes on
meanwhile."""

from __future__ import annotations

from typing import Any

import pytest

from nerts_lan.lan.rejoining import unreachable_line, unreachable_text
from nerts_lan.practice import PracticeConfig
from nerts_lan.table.session import LeftBehind, TablePaused, Unreachable
from tests.kit import layout, piles, team
from tests.ui.conftest import Harness
from ui.lobby.lan import LanLobby


def _table_with_a_say_in_pauses(harness: Harness) -> tuple[Any, list[object]]:
    """A practice table whose session also hands over the events the test puts in the list
    (as a LAN session does for a paused table)."""
    state = layout(
        team("You", ("You",), nerts="5C AH", work=("9D", "8D", "", "2C")),
        team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D"),
    )
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=state)
    harness.settle(0.2)
    screen = harness.window.current
    extra: list[object] = []
    poll = screen.session.poll

    def poll_with_extra(now: float) -> list[Any]:
        events = [*poll(now), *extra]
        extra.clear()
        return events

    screen.session.poll = poll_with_extra
    return screen, extra


def _top_middle(harness: Harness) -> tuple[float, float]:
    window = harness.window
    return window.width / 2, window.height - 20


def test_a_paused_table_shows_a_banner_until_it_is_back(harness: Harness) -> None:
    screen, extra = _table_with_a_say_in_pauses(harness)
    plain = harness.pixel(*_top_middle(harness))

    extra.append(TablePaused(True))
    harness.settle(0.2)
    assert screen.pause_banner.shown
    assert screen.pause_banner.texts[0] == "Waiting for the table…"
    assert harness.pixel(*_top_middle(harness)) != plain

    # Play goes on meanwhile: the ace still goes up at once.
    area = screen.view.layout.own_area
    harness.click(*area.nerts.center)
    harness.settle(0.3)
    assert piles(screen.session.view)["nerts"] == ["5C"]

    harness.window.dispatch_event("on_resize", 900, 640)  # still there after a resize
    harness.settle(0.1)
    assert screen.pause_banner.shown

    extra.append(TablePaused(False))
    harness.settle(0.2)
    assert not screen.pause_banner.shown
    assert "The table is back" in [shown.text for shown, _ in screen.hud.strip.lines]
    assert harness.pixel(*_top_middle(harness)) == plain


def test_a_wait_that_ends_with_the_table_gone_on_says_so(harness: Harness) -> None:
    """The others went on without this player (``LeftBehind``): its moves they never got are
    undone as it catches up, and the window says so instead of letting them vanish."""
    screen, extra = _table_with_a_say_in_pauses(harness)
    extra.append(TablePaused(True))
    harness.settle(0.2)
    extra.extend([TablePaused(False), LeftBehind()])
    harness.settle(0.2)
    assert not screen.pause_banner.shown
    said = [shown.text for shown, _ in screen.hud.strip.lines]
    assert said[0].startswith("The table went on without you"), said


def test_a_laptop_the_others_cannot_hear_says_why_it_sits_out_and_when_it_tries_again(
    harness: Harness,
) -> None:
    """Let go a third time in a row (``Unreachable``): the window says what fails and when it
    tries again, instead of a plain "the table went on without you" every few seconds."""
    screen, extra = _table_with_a_say_in_pauses(harness)
    wait = Unreachable(20.0, 3, ("Bo",), unreachable_text(("Bo",), 20.0))
    extra.extend([LeftBehind(), wait])
    harness.settle(0.2)
    said = [shown.text for shown, _ in screen.hud.strip.lines]
    assert said[0] == unreachable_line(("Bo",), 20.0), said
    assert said[0].startswith("Your laptop can't hear Bo") and "20 s" in said[0]


class _PausingSession:
    """What the lobby asks of a LAN session, with the events a test hands it."""

    def __init__(self) -> None:
        self.events: list[object] = []
        self.dealt = False
        self.requeued: list[object] = []

    def poll(self, now: float) -> list[object]:
        events, self.events = self.events, []
        return events

    def start_error(self) -> None:
        return None

    def requeue(self, events: list[object]) -> None:
        self.requeued = events


def test_the_lobby_says_the_table_waits_and_hands_the_wait_to_the_table_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lobby = LanLobby("127.0.0.1")
    monkeypatch.setattr(lobby, "_browse", lambda: None)
    session = _PausingSession()
    lobby.session = session  # type: ignore[assignment]
    session.events = [TablePaused(True)]
    lobby.poll(0.0)
    assert lobby.notice == "Waiting for the table…"
    session.events = [TablePaused(False)]
    lobby.poll(0.1)
    assert lobby.notice == ""
    session.events = [TablePaused(True)]
    lobby.poll(0.2)
    session.dealt = True  # dealt while the table waits: the table screen shows the wait
    assert lobby.poll(0.3) is session
    assert session.requeued == [TablePaused(True)]
    assert lobby.notice == ""
