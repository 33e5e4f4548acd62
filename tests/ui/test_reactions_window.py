"""Reactions in the real window: Shift+1 shows "Nice!" by your piles, another laptop's reaction
shows by its sender's, and a click on a rival's piles mutes theirs on this screen only."""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.actions import React
from tests.kit import layout, team
from tests.ui.conftest import Harness
from tests.ui.table_time import TableTimeSession
from tests.waiting import until

SECOND = 1_000_000


def _table(harness: Harness) -> tuple[Any, TableTimeSession]:
    state = layout(
        team("You", ("You",), nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S"),
        team("Bo", ("Bo",), nerts="KD", work=("KC", "KH", "KS", "QC")),
    )
    session = TableTimeSession(state, stamp=20 * SECOND)
    harness.window.start_session(session)
    harness.settle(0.2)
    return harness.window.current, session


def _said(screen: Any) -> list[str]:
    return [shown.text for shown, _ in screen.hud.strip.lines]


def _area(screen: Any, team: int) -> Any:
    return next(a.area for a in screen.view.layout.teams if a.team == team)


def test_shift_1_shows_nice_by_your_piles_for_two_seconds(harness: Harness) -> None:
    from pyglet.window import key

    screen, session = _table(harness)
    harness.send("on_key_press", key._1, key.MOD_SHIFT)

    assert screen.reactions.texts() == {"You": "Nice!"}
    assert _area(screen, 0).contains(*screen.reactions.places()["You"])
    assert session.view == session.replica.stable  # nothing of the round changed
    harness.send("on_key_press", key._2, key.MOD_SHIFT)  # a millisecond later: too soon
    assert screen.reactions.texts() == {"You": "Nice!"}
    assert "One reaction a second, please" in _said(screen)
    until(lambda: not screen.reactions.texts(), what="the reaction to go", between=harness.frame)


def test_a_number_key_alone_still_picks_a_work_pile(harness: Harness) -> None:
    from pyglet.window import key

    screen, _ = _table(harness)
    harness.key(key._1)
    assert screen.reactions.texts() == {}
    assert screen.marking.selection is not None


def test_another_laptops_reaction_shows_by_its_piles_unless_muted_here(harness: Harness) -> None:
    screen, session = _table(harness)
    session.arrive((21 * SECOND, "bo-laptop"), React("Bo", "wow"))
    harness.frame()
    assert screen.reactions.texts() == {"Bo": "Wow!"}
    assert _area(screen, 1).contains(*screen.reactions.places()["Bo"])

    rival = _area(screen, 1)
    harness.click(rival.x + 4, rival.y + 4)  # a click on Bo's piles mutes Bo here
    assert screen.reactions.texts() == {}
    assert any("Bo: reactions muted" in line for line in _said(screen)), _said(screen)
    session.arrive((23 * SECOND, "bo-laptop"), React("Bo", "gg"))
    harness.frame()
    assert screen.reactions.texts() == {}
    assert session.replica.pending[-1][2] is None  # the table took it: only this screen mutes

    harness.click(rival.x + 4, rival.y + 4)  # and again: Bo's reactions show again
    session.arrive((25 * SECOND, "bo-laptop"), React("Bo", "hot"))
    harness.frame()
    assert screen.reactions.texts() == {"Bo": "Hot!"}


def test_in_practice_a_reaction_shows_by_your_piles_too(harness: Harness) -> None:
    from pyglet.window import key

    from tests.ui.conftest import practice_with_a_lone_ace

    screen = practice_with_a_lone_ace(harness)
    harness.send("on_key_press", key._5, key.MOD_SHIFT)
    assert screen.reactions.texts() == {"You": "GG"}
    assert _area(screen, 0).contains(*screen.reactions.places()["You"])


def test_the_reaction_row_sends_one_with_a_click(harness: Harness) -> None:
    """For the mouse: a row of the five reactions along the bottom, clear of the round's line
    and of the buttons' column, at the smallest window too."""
    screen, _ = _table(harness)
    for width, height in ((1024, 720), (640, 420)):
        harness.send("on_resize", width, height)
        row = screen.hud.reaction_buttons
        assert [b.text.text for b in row] == ["Nice!", "Wow!", "Oops!", "Hot!", "GG"]
        column = screen.hud.buttons
        line = screen.hud.round_label
        line_right = 10 + line.width_of(line.text)
        for button in row:
            assert not any(_overlap(button.rect, other.rect) for other in column)
            assert button.rect.x > line_right or button.rect.y > 10 + line.line_height
    harness.click(*screen.hud.reaction_buttons[4].rect.center)
    assert screen.reactions.texts() == {"You": "GG"}


def _overlap(a: Any, b: Any) -> bool:
    return a.x < b.right and b.x < a.right and a.y < b.top and b.y < a.top
