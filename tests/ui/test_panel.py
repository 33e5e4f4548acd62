"""The round-over panel and leaving a match, in a real window: nothing is lost by accident.

A player hammering Space (flip) or Enter (to a foundation) as someone calls Nerts must see the
round's scores; a click meant for the stock must not land on a button of the panel; every way out
of a match (the Menus, Esc, closing the window during a LAN round) asks first, and a stray key
answers Stay. Practice stands still while the player reads the help or the options.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nerts_lan.practice import BOT_NAMES, PracticeConfig, PracticeSession
from nerts_lan.table.session import PacedSession
from tests.kit import layout, piles, team
from tests.ui.conftest import Harness

SIZES = [(1024, 640), (1280, 800), (1920, 1080)]


def _practice(harness: Harness, opponents: int = 1, delay_scale: float = 1e6, **you: Any) -> Any:
    """A practice table with a known deal: the player's piles as given (by default an empty
    nerts pile, to call Nerts with X), the bots' a few cards each."""
    you = {"work": ("9D", "6S", "", "2C"), "stock": "3S 4S 5S 6D 7D 8D", **you}
    bots = [
        team(name, (name,), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D")
        for name in BOT_NAMES[:opponents]
    ]
    state = layout(team("You", ("You",), **you), *bots)
    config = PracticeConfig(player="You", opponents=opponents, seed="t", delay_scale=delay_scale)
    harness.window.start_practice(config, first_deal=state)
    harness.settle(0.2)
    return harness.window.current


def _round_over(harness: Harness, screen: Any) -> Any:
    """The player calls Nerts; the banner passes; the panel, still in its quiet moment."""
    from pyglet.window import key

    from ui.table.overlays import ScoreOverlay

    harness.key(key.X)
    for _ in range(200):
        if isinstance(screen.overlay, ScoreOverlay):
            return screen.overlay
        harness.frame(1 / 30)
    raise AssertionError("no round-over panel")


def _panel_quiet_over(harness: Harness, panel: Any) -> None:
    while not panel.ready():
        harness.frame(1 / 30)
    harness.frame()


# --- the round-over panel ---------------------------------------------------------------------


def test_space_hammered_as_a_bot_calls_nerts_leaves_the_scores_up(harness: Harness) -> None:
    """The user test's flow: the player flips and flips while a bot calls Nerts."""
    from pyglet.window import key

    from ui.table.overlays import ScoreOverlay

    # Ada's nerts pile is empty and yours nearly: she calls Nerts within her reaction time.
    screen = _practice(harness, nerts="9C 5H", delay_scale=1.0)
    session = screen.session
    shown_at = None
    for _ in range(600):
        harness.key(key.SPACE)
        if shown_at is None and isinstance(screen.overlay, ScoreOverlay):
            shown_at = harness.clock[0]
        if shown_at is not None and harness.clock[0] > shown_at + 3.0:
            break
    assert shown_at is not None, "Ada never called Nerts"
    assert isinstance(screen.overlay, ScoreOverlay), "Space took the panel away"
    assert session.round_number == 1 and session.waiting_for_next_round
    assert screen.overlay.ended.outcome.caller == "Ada"

    harness.key(key.ENTER)
    harness.settle(0.3)
    assert session.round_number == 2 and screen.overlay is None


def test_the_panel_takes_no_key_nor_click_in_its_quiet_moment_then_only_enter(
    harness: Harness,
) -> None:
    from pyglet.window import key

    screen = _practice(harness)
    session = screen.session
    panel = _round_over(harness, screen)
    next_button = panel.buttons[0]
    assert "Next round" in next_button.text.text and not next_button.enabled

    for symbol in (key.ENTER, key.RETURN, key.ESCAPE, key.SPACE, key.F):
        harness.key(symbol)
    harness.click(*next_button.rect.center)
    assert screen.overlay is panel and session.round_number == 1

    _panel_quiet_over(harness, panel)
    assert next_button.enabled
    for symbol in (key.SPACE, key.F, key.N, key._1, key.H, key.S, key.X):
        harness.key(symbol)
    assert screen.overlay is panel and session.round_number == 1

    harness.key(key.ENTER)
    harness.settle(0.3)
    assert session.round_number == 2 and screen.overlay is None


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("card_size", ["small", "large"])
@pytest.mark.parametrize("opponents", [1, 7])
def test_the_panels_buttons_never_sit_over_a_clickable_pile(
    window_of: Callable[[int, int], Harness],
    size: tuple[int, int],
    card_size: str,
    opponents: int,
) -> None:
    from ui.table.layout import clickable_piles

    harness = window_of(*size)
    window = harness.window
    window.settings = window.settings.with_(card_size=card_size)
    screen = _practice(harness, opponents=opponents)
    panel = _round_over(harness, screen)
    _panel_quiet_over(harness, panel)
    layout_now = screen.view.layout
    assert (layout_now.width, layout_now.height) == size

    clickable = [rect for _, rect in clickable_piles(layout_now)]
    clickable += [button.rect for button in screen.hud.buttons]
    for button in panel.buttons:
        assert button.rect.right <= size[0] and button.rect.top <= size[1]
        for rect in clickable:
            assert button.rect.overlap(rect) == 0, (button.text.text, button.rect, rect)

    # A click on every pile and every button of the table, as if the panel were not there.
    for rect in clickable:
        harness.click(*rect.center)
    assert window.current is screen and screen.overlay is panel
    assert screen.session.round_number == 1


# --- leaving asks first -------------------------------------------------------------------------


def test_the_tables_menu_and_esc_ask_before_leaving_and_stray_keys_stay(
    harness: Harness,
) -> None:
    from pyglet.window import key

    from ui.screens.menu import MenuScreen
    from ui.table.confirm import ConfirmOverlay

    screen = _practice(harness, nerts="9C 5H")
    menu = next(b for b in screen.hud.buttons if b.text.text == "Menu")

    harness.click(*menu.rect.center)
    assert isinstance(screen.overlay, ConfirmOverlay)
    for symbol in (key.ENTER, key.SPACE, key.ESCAPE):
        harness.key(symbol)
        assert harness.window.current is screen and screen.overlay is None
        harness.key(key.ESCAPE)  # nothing picked: Esc asks to leave
        assert isinstance(screen.overlay, ConfirmOverlay)
    harness.click(*menu.rect.center)  # where the Menu was: the question is elsewhere
    assert harness.window.current is screen

    harness.key(key.N)  # with a card picked, Esc drops the pick and asks nothing
    harness.key(key.ESCAPE)
    harness.key(key.N)
    assert screen.marking.selection is not None and screen.overlay is None
    harness.key(key.ESCAPE)
    assert screen.marking.selection is None and screen.overlay is None

    harness.key(key.ESCAPE)
    leave = next(b for b in screen.overlay.buttons if b.text.text.startswith("Leave"))
    harness.click(*leave.rect.center)
    assert isinstance(harness.window.current, MenuScreen)


def test_the_panels_menu_asks_and_stay_brings_the_scores_back(harness: Harness) -> None:
    from pyglet.window import key

    from ui.screens.menu import MenuScreen
    from ui.table.confirm import ConfirmOverlay

    screen = _practice(harness)
    panel = _round_over(harness, screen)
    _panel_quiet_over(harness, panel)
    menu = next(b for b in panel.buttons if b.text.text == "Menu")

    harness.click(*menu.rect.center)
    assert isinstance(screen.overlay, ConfirmOverlay)
    harness.click(*menu.rect.center)  # a double click lands on nothing
    assert isinstance(screen.overlay, ConfirmOverlay)
    harness.key(key.ENTER)
    assert screen.overlay is panel and screen.session.round_number == 1

    harness.key(key.ESCAPE)  # Esc on the panel asks too
    assert isinstance(screen.overlay, ConfirmOverlay)
    harness.key(key.L)
    assert isinstance(harness.window.current, MenuScreen)


def test_a_finished_match_and_a_closed_practice_window_do_not_ask(harness: Harness) -> None:
    from pyglet.window import key

    from ui.screens.menu import MenuScreen

    screen = _practice(harness)
    screen.match_over = True  # as after MatchEnded: nothing is lost by leaving now
    harness.key(key.ESCAPE)
    assert isinstance(harness.window.current, MenuScreen)

    _practice(harness, nerts="9C 5H")
    harness.send("on_close")
    assert harness.window.has_exit and harness.window.current is None


class _LanLike:
    """A practice table dressed as a LAN seat: the round does not wait for this player."""

    def __init__(self, practice: PracticeSession) -> None:
        self._practice = practice
        self.local_players = practice.local_players
        self.table = practice.table
        self.closed = False

    @property
    def view(self) -> Any:
        return self._practice.view

    @property
    def match(self) -> Any:
        return self._practice.match

    def submit(self, action: Any) -> None:
        self._practice.submit(action)

    def send_cursor(self, player: str, x: float, y: float, holding: tuple[str, ...]) -> None:
        """Nobody to show the pointer to."""

    def poll(self, now: float) -> list[Any]:
        return self._practice.poll(now)

    def close(self) -> None:
        self.closed = True
        self._practice.close()


def test_closing_the_window_during_a_lan_round_asks_first(harness: Harness) -> None:
    from pyglet.window import key

    from ui.table.confirm import ConfirmOverlay

    state = layout(
        team("You", ("You",), nerts="9C 5H", stock="3S 4S"),
        team("Ada", ("Ada",), nerts="KD QD", stock="2D 3D"),
    )
    practice = PracticeSession(
        PracticeConfig(opponents=1, seed="lan", delay_scale=1e6), first_deal=state
    )
    session = _LanLike(practice)
    assert not isinstance(session, PacedSession)
    harness.window.start_session(session)
    harness.settle(0.2)
    screen = harness.window.current

    harness.send("on_close")
    assert not harness.window.has_exit and harness.window.current is screen
    assert isinstance(screen.overlay, ConfirmOverlay) and not session.closed
    harness.key(key.ENTER)  # the safe answer
    assert screen.overlay is None and not harness.window.has_exit

    harness.send("on_close")
    harness.send("on_close")  # asked once, not twice
    leave = next(b for b in screen.overlay.buttons if b.text.text.startswith("Leave"))
    harness.click(*leave.rect.center)
    assert harness.window.has_exit and harness.window.current is None and session.closed


# --- practice pauses while the player reads ------------------------------------------------


@pytest.mark.parametrize("opener", ["F1", "O"])
def test_practice_stands_still_while_help_or_options_is_open(harness: Harness, opener: str) -> None:
    from pyglet.window import key

    # Ada has cards to play at once, and plays at a medium bot's pace.
    screen = _practice(harness, nerts="9C 5H", delay_scale=1.0)
    screen_state = screen.session.view
    ada_before = piles(screen_state, 1)

    harness.key(getattr(key, opener))
    assert screen.overlay is not None
    harness.settle(30.0)
    assert piles(screen.session.view, 1) == ada_before, "Ada played while the player read"
    assert screen.session.paused

    harness.key(key.ESCAPE)
    assert screen.overlay is None and not screen.session.paused
    for _ in range(600):
        harness.frame(1 / 30)
        if piles(screen.session.view, 1) != ada_before:
            break
    assert piles(screen.session.view, 1) != ada_before, "Ada stays frozen after the help"
