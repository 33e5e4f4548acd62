"""The real window, driven by real mouse and key events: what a player does and sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nerts_lan.practice import PracticeConfig
from nerts_lan.rules.cards import DECK
from tests.kit import piles
from tests.ui.conftest import Harness, frozen_practice

FELT_MAX_RED = 60  # the green cloth: anything with more red than this is a card or a label
CARD_FACE_MIN = 200


def _is_face(colour: tuple[int, int, int]) -> bool:
    return all(channel >= CARD_FACE_MIN for channel in colour)


def _is_felt(colour: tuple[int, int, int]) -> bool:
    r, g, b = colour
    return r < FELT_MAX_RED and g > r and g > b


def _inside(rect: Any, fx: float = 0.85, fy: float = 0.6) -> tuple[float, float]:
    """A point of a card away from its corner text and its centre symbol."""
    return rect.x + rect.w * fx, rect.y + rect.h * fy


def test_dragging_the_nerts_card_onto_a_work_pile_moves_it_there(harness: Harness) -> None:
    screen = frozen_practice(harness, nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S 4S 5S")
    area = screen.view.layout.own_area
    landing = area.work_card(1, 1, 2)
    below = (landing.x + landing.w * 0.85, landing.y + landing.h * 0.15)
    assert _is_felt(harness.pixel(*below))

    harness.drag(area.nerts.center, landing.center)
    harness.settle()

    state = screen.session.view
    assert piles(state)["work"][1] == ["6S", "5H"]
    assert piles(state)["nerts"] == ["9C"]
    assert _is_face(harness.pixel(*below))


def test_clicking_an_ace_sends_it_to_a_foundation(harness: Harness) -> None:
    screen = frozen_practice(harness, nerts="9C AS", work=("9D", "6S", "", "2C"))
    area = screen.view.layout.own_area
    first_foundation = screen.view.layout.foundation_rect(0)
    assert _is_felt(harness.pixel(*_inside(first_foundation)))

    harness.click(*area.nerts.center)
    harness.settle()

    state = screen.session.view
    assert [[str(DECK[c]) for c in cards] for cards in state.f_cards] == [["AS"]]
    assert piles(state)["nerts"] == ["9C"]
    assert _is_face(harness.pixel(*_inside(first_foundation)))


def test_a_refused_drop_snaps_back_with_the_reason_in_players_words(harness: Harness) -> None:
    screen = frozen_practice(harness, nerts="9C 5H", work=("9D", "8D", "", "2C"))
    area = screen.view.layout.own_area
    before = piles(screen.session.view)
    landing = area.work_card(0, 1, 2)  # on the 9D: a 5H does not go there
    below = (landing.x + landing.w * 0.85, landing.y + landing.h * 0.15)

    harness.drag(area.nerts.center, landing.center)
    said = [shown.text for shown, _ in screen.hud.strip.lines]
    harness.settle(0.6)

    assert piles(screen.session.view) == before
    assert "5♥ goes on a black 6, not on 9♦" in said, said
    assert _is_felt(harness.pixel(*below))
    assert _is_face(harness.pixel(*_inside(area.nerts)))


def test_the_space_key_flips_three_cards_from_the_stock(harness: Harness) -> None:
    from pyglet.window import key

    screen = frozen_practice(
        harness, nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S 4S 5S 6D"
    )
    waste = screen.view.layout.own_area.waste
    assert not _is_face(harness.pixel(*_inside(waste)))

    harness.key(key.SPACE)
    harness.settle()

    assert piles(screen.session.view)["waste"] == ["6D", "5S", "4S"]
    assert piles(screen.session.view)["stock"] == ["3S"]
    assert _is_face(harness.pixel(*_inside(waste, fx=0.5, fy=0.9)))


def test_the_keyboard_picks_the_nerts_card_and_puts_it_on_a_work_pile(harness: Harness) -> None:
    from pyglet.window import key

    screen = frozen_practice(harness, nerts="9C 5H", work=("9D", "6S", "", "2C"))
    harness.key(key.N)
    harness.key(key._2)
    harness.settle(0.3)
    assert piles(screen.session.view)["work"][1] == ["6S", "5H"]


def test_the_help_overlay_lists_the_keys(harness: Harness) -> None:
    from pyglet.window import key

    screen = frozen_practice(harness, nerts="9C 5H")
    harness.key(key.F1)
    texts = [item.text for item in screen.overlay.items if hasattr(item, "text")]
    assert "Space" in texts and any("Nerts" in text for text in texts)
    harness.key(key.ESCAPE)
    assert screen.overlay is None


def test_an_idle_table_does_not_redraw(harness: Harness) -> None:
    frozen_practice(harness, nerts="9C 5H")
    harness.settle(0.5)
    drawn = [harness.frame() for _ in range(30)]
    assert not any(drawn)


def test_the_menu_shows_no_tables_yet_and_starts_practice(harness: Harness) -> None:
    harness.window.show_menu()
    harness.frame()
    menu = harness.window.current
    texts = [item.text for item in menu.items if hasattr(item, "text")]
    assert any("No tables found yet" in text for text in texts)
    practice = next(b for b in menu.buttons if b.text.text == "Practice")
    harness.click(*practice.rect.center)
    harness.frame()
    assert type(harness.window.current).__name__ == "TableScreen"


def test_the_player_name_is_remembered(harness: Harness, settings_dir: Path) -> None:
    from pyglet.window import key

    from ui.config import load_settings

    harness.window.show_menu()
    harness.frame()
    menu = harness.window.current
    harness.click(*menu.name_field.rect.center)
    harness.send("on_text", "Zoë")
    harness.key(key.ENTER)
    assert load_settings().player_name == "Zoë"
    assert (settings_dir / "settings.json").exists()


@pytest.mark.parametrize("teams", [1, 8])
def test_any_number_of_teams_fits_the_window(harness: Harness, teams: int) -> None:
    harness.window.start_practice(PracticeConfig(opponents=teams - 1, seed="fit", delay_scale=1e6))
    harness.settle(0.2)
    view = harness.window.current.view
    for area in view.layout.teams:
        for rect in (area.nerts, area.stock, area.waste, *area.work):
            assert rect.x >= 0 and rect.right <= 1024 and rect.y >= 0 and rect.top <= 720
    assert _is_face(harness.pixel(*_inside(view.layout.own_area.nerts)))
