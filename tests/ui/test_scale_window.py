"""The window follows the display's scale: on a Retina Mac (2) or Windows at 125–200 %, the same
table in as many points is drawn with that many more pixels, and the mouse still lands where
the player points.

A headless EGL window always reports a scale of 1, so the scale is given to the one place that
reads it (``ui.app.display_scale``), as a Retina Mac would give it: a window of 640 x 400 points
there is a framebuffer of 1280 x 800 pixels, with the mouse in the same pixels (pyglet's
"scaled" mode on macOS).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kit import piles
from tests.ui.conftest import Harness, practice_with_a_lone_ace
from ui.kit.theme import CARD_FACE, TEXT

pyglet = pytest.importorskip("pyglet")

POINTS = (640, 400)
"""The window's size in the UI's units, at either scale."""


@pytest.fixture
def scales(monkeypatch: pytest.MonkeyPatch) -> dict[int, float]:
    """The display's scale of each window (by ``id``), 1 for the others."""
    from ui import app

    given: dict[int, float] = {}
    monkeypatch.setattr(
        app, "display_scale", lambda window: given.get(id(window), 1.0), raising=False
    )
    return given


@pytest.fixture
def retina(settings_dir: Path, scales: dict[int, float]) -> Iterator[Harness]:
    """A window on a display of scale 2: 1280 x 800 pixels for 640 x 400 points."""
    yield from _window(scales, 2.0)


@pytest.fixture
def plain(settings_dir: Path, scales: dict[int, float]) -> Iterator[Harness]:
    """The same window on a display of scale 1."""
    yield from _window(scales, 1.0)


def _window(scales: dict[int, float], scale: float) -> Iterator[Harness]:
    from ui.app import make_window

    clock = [100.0]
    pixels = (round(POINTS[0] * scale), round(POINTS[1] * scale))
    window = make_window(*pixels, clock=lambda: clock[0])
    scales[id(window)] = scale
    window.on_resize(*window.get_size())  # the scale arrives with the first resize
    try:
        yield Harness(window, clock)
    finally:
        window.close()


def _near(found: tuple[int, int, int], colour: tuple[int, int, int], near: int = 6) -> bool:
    return all(abs(a - b) <= near for a, b in zip(found, colour))


def _count(harness: Harness, colour: tuple[int, int, int], near: int = 6) -> int:
    data, _, _ = harness.pixels()
    r, g, b = colour
    return sum(
        1
        for i in range(0, len(data), 3)
        if abs(data[i] - r) <= near
        and abs(data[i + 1] - g) <= near
        and abs(data[i + 2] - b) <= near
    )


def test_at_scale_2_the_table_is_laid_out_in_points_and_drawn_twice_as_big(
    retina: Harness, plain: Harness
) -> None:
    big, small = practice_with_a_lone_ace(retina), practice_with_a_lone_ace(plain)
    assert retina.window.get_size() == (1280, 800)
    assert (retina.window.width, retina.window.height) == POINTS
    assert big.view.layout == small.view.layout  # the same table, in the same units

    # Twice the size each way: four times the pixels of card faces and of text.
    faces = _count(retina, CARD_FACE) / _count(plain, CARD_FACE)
    ink = _count(retina, TEXT, near=40) / _count(plain, TEXT, near=40)
    assert 3.6 < faces < 4.4, faces
    assert 3.0 < ink < 5.0, ink
    # Where a card lies in points, it covers twice the pixels: the A♥ on the nerts pile.
    nerts = big.view.layout.own_area.nerts
    x, y = nerts.x + nerts.w * 0.9, nerts.y + nerts.h * 0.55  # beside the heart
    assert _near(retina.pixel(x * 2, y * 2), CARD_FACE) and _near(plain.pixel(x, y), CARD_FACE)
    outside = (nerts.x - 2, nerts.y + nerts.h * 0.55)
    assert not _near(retina.pixel(outside[0] * 2, outside[1] * 2), CARD_FACE)


def test_at_scale_2_the_mouse_in_pixels_lands_on_the_card_the_player_points_at(
    retina: Harness,
) -> None:
    screen = practice_with_a_lone_ace(retina)
    area = screen.view.layout.own_area
    centre = screen.view.layout.center.center
    # The mouse comes in framebuffer pixels: twice the points.
    retina.drag(
        (area.nerts.center[0] * 2, area.nerts.center[1] * 2), (centre[0] * 2, centre[1] * 2)
    )
    retina.settle(0.6)
    assert piles(screen.session.view)["nerts"] == []
    assert "AH" in [card for pile in screen.session.view.f_cards for card in _names(pile)]


def _names(cards: Any) -> list[str]:
    from nerts_lan.rules.cards import Card

    return [str(Card(card)) for card in cards]


def test_the_coach_opens_its_replay_window_at_the_game_windows_size_in_points(
    retina: Harness, _private_data_folder: Path
) -> None:
    from pyglet.window import key

    from ui.table.overlays import ScoreOverlay

    screen = practice_with_a_lone_ace(retina)
    retina.settle(6.0)  # the A♥ waits six seconds: a moment for the coach
    for symbol in (key.N, key.F, key.X):
        retina.key(symbol)
    for _ in range(200):
        if isinstance(screen.overlay, ScoreOverlay) and screen.overlay.ready():
            break
        retina.frame(1 / 30)
    panel = screen.overlay
    assert isinstance(panel, ScoreOverlay)
    retina.frame()
    show = next(b for b in panel.buttons if b.text.text == "Show")
    retina.click((show.rect.x + 10) * 2, (show.rect.y + 10) * 2)  # a click in pixels
    coach = retina.window.coach_window
    assert coach is not None, "the Show button did not take the click"
    # Asked at 640 x 400 points (1280 x 800 pixels again on the Retina display), not at the
    # game window's 1280 x 800 pixels taken as points: twice the screen.
    assert coach.get_requested_size() == POINTS
