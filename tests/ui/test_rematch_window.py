"""A rematch at a LAN table, in the real window (127.0.0.1): once the match is over, the
scoreboard's button asks the table for a rematch; the same people play a new match from zero,
every seat moved on one team."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

from pyglet.window import key

from nerts_lan.bots.bot import Bot
from nerts_lan.lan.advert import LanOptions
from nerts_lan.lan.seat import LanSession
from nerts_lan.rules.state import Options
from tests.ui.conftest import Harness
from tests.ui.lan_kit import button_named, run_until
from ui.lobby.provider import HostRequest
from ui.table.overlays import ScoreOverlay

QUICK = Options(target=1, pile=3)
"""A match over after a round or two: a small nerts pile, and any positive total wins."""


def _a_table_with_a_guest(harness: Harness, request: HostRequest, guests: list[LanSession]) -> Any:
    """The window hosts ``request`` on 127.0.0.1, a hard bot joins as Bo from this process
    (added to ``guests``, for the test to close), the window readies and starts; its table
    screen."""
    window = harness.window
    lobby = window.lobby
    window.show_menu()
    lobby.host("Ann", request)
    run_until(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
    window._show_lobby(host_form=False)  # the lobby screen shows the table the window sits at
    advert = run_until(harness, lambda: lobby.advertised(lobby.session.status.table_id))
    guest_options = LanOptions(
        "Bo", f"bo-{secrets.token_hex(2)}", interface="127.0.0.1", bot="hard", bot_delay=0.05
    )
    guests.append(LanSession.join(guest_options, advert))
    run_until(harness, lambda: len(lobby.lobby().ready) == 1 and len(lobby.lobby().seats) == 2)
    harness.click(*button_named(window.current, "I'm ready").rect.center)
    run_until(harness, lambda: button_named(window.current, "Start").enabled)
    harness.click(*button_named(window.current, "Start").rect.center)
    return run_until(
        harness, lambda: getattr(window.current, "scoreboard", None) and window.current, 20
    )


def test_the_match_over_button_starts_a_rematch_with_seats_moved(lan_harness: Harness) -> None:
    harness = lan_harness
    guests: list[LanSession] = []
    request = HostRequest(f"Again {secrets.token_hex(2)}", options=QUICK, seats=2, countdown=0)
    try:
        screen = _a_table_with_a_guest(harness, request, guests)
        guest = guests[0]
        session = screen.session
        my_team = screen.team
        _play_until_the_match_is_over(harness, screen)

        button = screen.overlay.buttons[0]
        assert button.text.text == "Rematch (Enter)" and button.enabled
        if os.environ.get("NERTS_SCREENSHOTS"):  # docs/: what the README shows
            harness.save(Path(os.environ["NERTS_SCREENSHOTS"]) / "rematch.png")
        ended_round = screen.round_number
        harness.key(key.ENTER)

        at_the_deal: dict[str, Any] = {}

        def rematched() -> bool:  # as the rematch's first deal shows (bots play on at once)
            if screen.round_number == ended_round + 1:
                at_the_deal.setdefault("match", session.match)
                at_the_deal.setdefault("team", session.table.team_of(session.local_players[0]))
                at_the_deal.setdefault("overlay", screen.overlay)
            return bool(at_the_deal)

        run_until(harness, rematched, 30)
        assert at_the_deal["overlay"] is None
        assert at_the_deal["match"].rounds == ()
        assert set(at_the_deal["match"].totals.values()) == {0}
        assert at_the_deal["team"] != my_team
        run_until(harness, lambda: _dealt_again(guest, ended_round + 1))
    finally:
        for guest in guests:
            guest.close(leave=True)


def test_after_the_deal_everyone_waits_for_go(lan_harness: Harness) -> None:
    """The table's countdown (3 s, the window host's): "3, 2, 1, go!" over the table; a move
    made before "go" goes back with "Wait for go!", one after it is played."""
    harness = lan_harness
    guests: list[LanSession] = []
    request = HostRequest(f"Ready {secrets.token_hex(2)}", options=QUICK, seats=2)
    try:
        screen = _a_table_with_a_guest(harness, request, guests)
        assert screen.session.countdown == 3.0
        assert screen.countdown.shown == "3"
        before = screen.session.view
        harness.key(key.SPACE)  # a flip, too soon
        assert screen.session.view.teams[screen.team] == before.teams[screen.team]
        assert "Wait for go!" in [m.text for m in screen.messages.visible()]
        harness.frame(1.2)
        assert screen.countdown.shown == "2"
        harness.frame(2.0)
        assert screen.countdown.shown == "Go!"
        harness.key(key.SPACE)
        waste = before.teams[screen.team].waste
        run_until(harness, lambda: screen.session.view.teams[screen.team].waste != waste)
        harness.frame(1.0)
        assert screen.countdown.shown is None
    finally:
        for guest in guests:
            guest.close(leave=True)


def _dealt_again(guest: LanSession, number: int) -> bool:
    """The other laptop dealt the rematch's first round too."""
    guest.poll()
    return guest.lobby is not None and guest.lobby.round_number == number


def _play_until_the_match_is_over(harness: Harness, screen: Any) -> None:
    """This laptop's seat is played by a bot through the session (as the player would), until
    the scoreboard says the match is over."""
    session = screen.session
    me = session.local_players[0]
    bot = Bot(me, "hard", seed="again", delay_scale=0.05)
    next_move = [0.0]

    def over() -> bool:
        now = time.monotonic()
        overlay = screen.overlay
        if isinstance(overlay, ScoreOverlay):
            return overlay.match_over and overlay.ready()
        if now >= next_move[0] and session.view is not None:
            action = bot.decide(session.view, now)
            if action is not None:
                session.submit(action)
            next_move[0] = now + max(bot.reaction_delay(action), 0.01)
        if isinstance(overlay, ScoreOverlay) and not overlay.match_over:
            harness.key(key.ENTER)
        return False

    def over_or_next() -> bool:
        overlay = screen.overlay
        if isinstance(overlay, ScoreOverlay) and not overlay.match_over and overlay.ready():
            harness.key(key.ENTER)  # a round that did not end the match: deal on
        return over()

    run_until(harness, over_or_next, 120)
