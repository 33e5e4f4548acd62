"""The round's end as a show: the scoreboard counts each team's round score and match total up,
last place first, and once the count reaches the top a finished match names its winner in large
type; with reduced motion everything stands at once."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pyglet.window import key

from nerts_lan.practice import PracticeConfig
from nerts_lan.rules.state import Options
from tests.kit import layout, team
from tests.ui.conftest import Harness
from ui.config import load_settings, save_settings
from ui.table.overlays import ScoreOverlay
from ui.table.tally import ROW_SECONDS, CountedRow, Tally


def _cells(row: CountedRow) -> tuple[str, str]:
    return row.round_cell.text, row.total_cell.text


def test_the_tally_counts_last_place_first_then_names_the_winner() -> None:
    rows = [
        CountedRow(SimpleNamespace(text=""), SimpleNamespace(text=""), -6, 10),
        CountedRow(SimpleNamespace(text=""), SimpleNamespace(text=""), 8, 30, " ×1.5"),
    ]
    finale = SimpleNamespace(text="")
    tally = Tally(0.0, rows, True, (finale, "Ann wins!"))
    tally.update(0.0)
    assert [_cells(r) for r in rows] == [("…", "16"), ("…", "22")]  # what it was before
    tally.update(ROW_SECONDS / 2)
    assert [_cells(r) for r in rows] == [("-3", "13"), ("…", "22")]
    tally.update(ROW_SECONDS * 1.5)
    assert _cells(rows[0]) == ("-6", "10") and _cells(rows[1]) == ("+4 ×1.5", "26")
    assert finale.text == ""
    assert tally.update(2 * ROW_SECONDS) and finale.text == "Ann wins!"
    assert _cells(rows[1]) == ("+8 ×1.5", "30")
    assert not tally.update(3 * ROW_SECONDS)  # it stands


def test_without_counting_everything_stands_at_once() -> None:
    row = CountedRow(SimpleNamespace(text=""), SimpleNamespace(text=""), 5, 12)
    finale = SimpleNamespace(text="")
    Tally(0.0, [row], False, (finale, "Bo wins!")).update(0.0)
    assert _cells(row) == ("+5", "12") and finale.text == "Bo wins!"


def _match_point(harness: Harness) -> Any:
    """Practice where the player's team already put two cards on a foundation and has an empty
    nerts pile: calling Nerts ends the match (the target is 1)."""
    you = team("You", ("You",), nerts="", work=("9D", "6S", "", "2C"), stock="3S 4S 5S")
    ada = team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="3D")
    state = layout(you, ada, foundations=(("AD 2D", "You You"),), target=1)
    config = PracticeConfig(
        player="You", opponents=1, seed="t", delay_scale=1e6, options=Options(target=1)
    )
    harness.window.start_practice(config, first_deal=state)
    harness.settle(0.2)
    return harness.window.current


def _scores_up(harness: Harness, screen: Any) -> ScoreOverlay:
    harness.key(key.X)
    for _ in range(300):
        if isinstance(screen.overlay, ScoreOverlay):
            return screen.overlay
        harness.frame(1 / 30)
    raise AssertionError("no scoreboard")


def test_the_scoreboard_counts_up_and_crowns_the_winner(harness: Harness) -> None:
    screen = _match_point(harness)
    panel = _scores_up(harness, screen)
    you = next(r for r in panel.tally.rows if r.score > 0)
    assert panel.match_over and you.round_cell.text == "…"  # the leader is counted last
    texts = [item.text for item in panel.items if hasattr(item, "text")]
    assert "You win!" not in texts
    for _ in range(int(3 * ROW_SECONDS * 30) + 5):
        harness.frame(1 / 30)
    assert you.round_cell.text == f"{you.score:+d}" and you.total_cell.text == str(you.total)
    assert any(getattr(item, "text", "") == "You win!" for item in panel.items)
    if os.environ.get("NERTS_SCREENSHOTS"):  # docs/: what the README shows
        harness.save(Path(os.environ["NERTS_SCREENSHOTS"]) / "round-end.png")


def test_with_reduced_motion_the_scores_stand_at_once(harness: Harness) -> None:
    save_settings(load_settings().with_(reduced_motion=True))
    harness.window.settings = load_settings()
    screen = _match_point(harness)
    panel = _scores_up(harness, screen)
    assert all(r.round_cell.text == f"{r.score:+d}" for r in panel.tally.rows)
    assert any(getattr(item, "text", "") == "You win!" for item in panel.items)
