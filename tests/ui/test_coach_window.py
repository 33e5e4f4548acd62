"""The coach on the scoreboard, in a real window: each moment opens the replay window there."""

from __future__ import annotations

import os
from pathlib import Path

from nerts_lan.history.stats import local_players, player_stats
from nerts_lan.history.store import open_history
from nerts_lan.rules.actions import Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.piles import ANY_FOUNDATION, NERTS
from tests.ui.conftest import Harness, practice_with_a_lone_ace


def test_a_nerts_card_left_waiting_is_on_the_scoreboard_and_show_opens_the_replay_there(
    harness: Harness, _private_data_folder: Path
) -> None:
    from pyglet.window import key

    from ui.screens.replay import ReplayScreen
    from ui.table.overlays import ScoreOverlay

    screen = practice_with_a_lone_ace(harness)
    harness.settle(6.0)  # the A♥ waits six seconds
    harness.key(key.N)
    harness.key(key.F)
    harness.key(key.X)
    for _ in range(200):
        if isinstance(screen.overlay, ScoreOverlay) and screen.overlay.ready():
            break
        harness.frame(1 / 30)
    panel = screen.overlay
    assert isinstance(panel, ScoreOverlay)
    ((text, _),) = panel.coach
    assert text.startswith("A♥ from your nerts pile could go to a foundation for 6.")
    assert text.endswith("s before it was played")
    texts = [getattr(item, "text", "") for item in panel.items]
    assert text in texts
    harness.frame()

    show = next(b for b in panel.buttons if b.text.text == "Show")
    harness.click(show.rect.x + 10, show.rect.y + 10)
    coach = harness.window.coach_window
    assert coach is not None and isinstance(coach.current, ReplayScreen)
    coach.tick()
    replay = coach.current
    missed = Play("You", Card.parse("AH"), NERTS, ANY_FOUNDATION)
    assert not replay.replay.playing and replay.replay.action_number == 0
    assert replay.replay.marked == missed and replay.marking.hint == missed
    assert replay.view.pointers.marks, "the missed move is outlined"
    assert isinstance(screen.overlay, ScoreOverlay)  # the game's window is where it was
    if shots := os.environ.get("NERTS_SCREENSHOTS"):
        harness.save(Path(shots) / "coach-scoreboard.png")
        Harness(coach, harness.clock).save(Path(shots) / "coach-replay.png")

    coach.dispatch_event("on_key_press", key.ESCAPE, 0)
    coach.dispatch_events()
    assert harness.window.coach_window is None

    with open_history(_private_data_folder) as history:  # the practice round is in the history
        assert local_players(history) == ["You"]
        record = player_stats(history, "You").record
    # One round of a match not played to its end: the round counts, the match is unfinished.
    assert (record.matches, record.matches_unfinished) == (0, 1)
    assert (record.rounds, record.rounds_won, record.nerts_calls) == (1, 1, 1)
    assert record.fastest_round_ms is not None and 6000 < record.fastest_round_ms < 8000
