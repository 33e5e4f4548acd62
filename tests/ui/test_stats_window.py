"""The Stats screen in the real window: opened from the menu, the history of this laptop."""

from __future__ import annotations

import os
from pathlib import Path

from nerts_lan.history.stats import Record
from nerts_lan.matchlog.rounds import fold_logged_rounds
from tests.test_history import timed_records, write_log
from tests.ui.conftest import Harness
from ui.kit.geometry import Rect
from ui.screens.stats import chart_points, record_rows


def _button(screen: object, caption: str) -> object:
    return next(b for b in screen.buttons if b.text.text == caption)  # type: ignore[attr-defined]


def _pixel(harness: Harness, x: float, y: float) -> tuple[int, ...]:
    """One pixel as drawn (reading only it: converting the whole window's pixels is slow)."""
    import pyglet

    window = harness.window
    window.switch_to()
    window.on_draw()
    buffer = pyglet.image.get_buffer_manager().get_color_buffer()
    return tuple(buffer.get_region(int(x), int(y), 1, 1).get_image_data().get_data("RGB", 3))


def _centre(button: object) -> tuple[float, float]:
    rect = button.rect  # type: ignore[attr-defined]
    return rect.x + rect.w / 2, rect.y + rect.h / 2


def test_the_menus_stats_button_shows_this_laptops_players_and_back_leaves(
    harness: Harness, _private_data_folder: Path
) -> None:
    from pyglet.window import key

    from ui.screens.menu import MenuScreen
    from ui.screens.stats import StatsScreen

    write_log(_private_data_folder / "logs")
    harness.window.show_menu()
    harness.frame()
    harness.click(*_centre(_button(harness.window.current, "Stats")))
    screen = harness.window.current
    assert isinstance(screen, StatsScreen)
    assert screen.players == ["p01"] and screen.player == "p01" and screen.problem is None
    stats = screen.stats
    rounds = len(fold_logged_rounds(timed_records()))
    assert stats is not None and stats.record.rounds == rounds and stats.record.matches == 1
    assert [opponent.name for opponent in stats.opponents] == ["p00"]
    x, y = screen.chart_points[0]  # one match: one point, drawn in the accent colour
    seen = _pixel(harness, x, y)
    assert all(abs(a - b) <= 8 for a, b in zip(seen, (255, 206, 84))), seen
    if shots := os.environ.get("NERTS_SCREENSHOTS"):
        harness.save(Path(shots) / "stats.png")

    harness.key(key.ESCAPE)
    assert isinstance(harness.window.current, MenuScreen)
    harness.click(*_centre(_button(harness.window.current, "Stats")))
    harness.click(*_centre(_button(harness.window.current, "Back")))
    assert isinstance(harness.window.current, MenuScreen)


def test_an_unreadable_history_is_one_sentence_on_the_stats_screen(
    harness: Harness, _private_data_folder: Path
) -> None:
    from ui.screens.stats import StatsScreen

    (_private_data_folder / "history.sqlite").mkdir(parents=True)  # a folder where the file goes
    harness.window.show_stats()
    harness.frame()
    screen = harness.window.current
    assert isinstance(screen, StatsScreen) and screen.stats is None
    assert screen.problem is not None and "match history" in screen.problem
    texts = [getattr(item, "text", "") for item in screen.items]
    assert screen.problem in texts


def test_the_record_reads_in_words_and_the_chart_spans_its_area() -> None:
    rows = dict(record_rows(Record(rounds=3, rounds_won=2, fastest_round_ms=95_400)))
    assert rows["Rounds"] == "3 played, 2 won" and rows["Fastest round won"] == "1 min 35 s"
    assert rows["Cards a minute"] == "—"
    area = Rect(10, 20, 100, 50)
    assert chart_points([1.0, 3.0, 2.0], area) == [(10, 20), (60, 70), (110, 45)]
    assert chart_points([4.0], area) == [(60, 45)]
