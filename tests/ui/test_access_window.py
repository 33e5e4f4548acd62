"""The accessibility options in the real window (issue 25): each chosen in Options, applied at
once to the table in play, and what the player then sees (piles, pixels, text)."""

from __future__ import annotations

import colorsys
import itertools
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.rules.cards import Card
from tests.kit import piles
from tests.ui.conftest import Harness, frozen_practice, practice_with_a_lone_ace

CARD_FACE_MIN = 200


def _choose(harness: Harness, option: str, times: int = 1) -> None:
    """Open Options (O), click ``option``'s button ``times`` times, close them (Esc)."""
    from pyglet.window import key

    harness.key(key.O)
    overlay = harness.window.current.overlay
    assert overlay is not None
    for _ in range(times):
        name = next(item for item in overlay.items if getattr(item, "text", None) == option)
        button = next(b for b in overlay.buttons if b.rect.y <= name.y <= b.rect.top)
        harness.click(*button.rect.center)
    harness.key(key.ESCAPE)
    assert harness.window.current.overlay is None


def _is_face(colour: tuple[int, int, int]) -> bool:
    return all(channel >= CARD_FACE_MIN for channel in colour)


def _ink(harness: Harness, rect: Any, inset: float = 5) -> list[tuple[int, ...]]:
    """The drawn pixels inside a card, short of its outline, that are not its white face:
    (x, y, r, g, b) each."""
    data, width, _ = harness.pixels()
    found = []
    for y in range(int(rect.y + inset), int(rect.top - inset)):
        for x in range(int(rect.x + inset), int(rect.right - inset)):
            offset = (y * width + x) * 3
            colour = (data[offset], data[offset + 1], data[offset + 2])
            if not _is_face(colour):
                found.append((x, y, *colour))
    return found


def _ink_hue(harness: Harness, rect: Any) -> float:
    """The hue (0-1) of the strongest-coloured ink on a card: its suit's colour."""
    ink = _ink(harness, rect)
    coloured = [p for p in ink if max(p[2:]) - min(p[2:]) > 60]
    assert coloured, "no coloured ink on the card"
    r, g, b = (sum(p[2 + i] for p in coloured) / len(coloured) / 255 for i in range(3))
    return colorsys.rgb_to_hsv(r, g, b)[0]


def _corner_index_height(harness: Harness, rect: Any) -> int:
    """How many pixel rows the corner index ("5♥") takes, from its top down: the first run of
    rows with ink in the top-left part of the card."""
    corner = type(rect)(rect.x, rect.top - rect.h * 0.34, rect.w * 0.7, rect.h * 0.34)
    rows = sorted({p[1] for p in _ink(harness, corner)}, reverse=True)
    assert rows, "no corner index drawn"
    height = 1
    for upper, lower in itertools.pairwise(rows):
        if upper - lower > 1:
            break
        height += 1
    return height


def _hue_gap(a: float, b: float) -> float:
    return min(abs(a - b), 1 - abs(a - b))


# --- left-handed layout ---------------------------------------------------------------------------


def test_left_handed_mirrors_the_own_piles_and_a_drag_to_a_foundation_plays(
    harness: Harness,
) -> None:
    from ui.config import load_settings

    screen = practice_with_a_lone_ace(harness)
    before = screen.view.layout.own_area
    assert before.nerts.x < before.stock.x

    _choose(harness, "Left-handed layout")

    assert load_settings().left_handed
    area = screen.view.layout.own_area
    assert area.nerts.x > max(rect.right for rect in area.work) > area.stock.x
    assert area.nerts.right > before.stock.right  # on the other side of the band
    x, y = area.nerts.x + area.nerts.w * 0.85, area.nerts.y + area.nerts.h * 0.6
    assert _is_face(harness.pixel(x, y))  # the A♥ is drawn where the layout says
    foundation = screen.view.layout.foundation_rect(0)

    harness.drag(area.nerts.center, foundation.center)
    harness.settle()

    state = screen.session.view
    assert [list(cards) for cards in state.f_cards] == [[int(Card.parse("AH"))]]
    assert piles(state)["nerts"] == []


# --- high-visibility cards ------------------------------------------------------------------------


def test_high_visibility_cards_have_four_suit_colours_and_larger_indices(
    harness: Harness,
) -> None:
    screen = frozen_practice(harness, nerts="9C 5H", work=("5D", "6S", "", "2C"))
    area = screen.view.layout.own_area
    heart, diamond = area.nerts, area.work[0]
    plain_gap = _hue_gap(_ink_hue(harness, heart), _ink_hue(harness, diamond))
    plain_index = _corner_index_height(harness, heart)
    assert plain_gap < 0.05  # two colours: ♦ as red as ♥

    _choose(harness, "High-visibility cards")
    harness.settle(2.0)  # the new look is drawn a few cards a frame

    assert screen.view.atlas.high_visibility
    gap = _hue_gap(_ink_hue(harness, heart), _ink_hue(harness, diamond))
    assert gap > 0.25, gap  # ♦ blue, ♥ red
    index = _corner_index_height(harness, heart)
    assert index >= plain_index * 1.2, (plain_index, index)
    edge = harness.pixel(heart.x + heart.w / 2, heart.y + 1)
    assert max(edge) < 80  # a dark outline, not the plain grey one


# --- reduced motion -------------------------------------------------------------------------------


def test_with_reduced_motion_a_moved_card_is_at_its_place_in_the_next_frame(
    harness: Harness,
) -> None:
    from pyglet.window import key

    screen = frozen_practice(harness, nerts="9C 5H", work=("9D", "6S", "", "2C"))
    _choose(harness, "Reduced motion")
    assert screen.view.reduced_motion
    card = int(Card.parse("5H"))
    harness.key(key.N)

    harness.window.dispatch_event("on_key_press", key._2, 0)
    harness.window.dispatch_events()
    harness.frame()

    assert piles(screen.session.view)["work"][1] == ["6S", "5H"]
    place = screen.view.layout.own_area.work_card(1, 1, 2)
    sprite = screen.view.sprites[(0, card)]
    assert (sprite.x, sprite.y) == (round(place.x), round(place.y))
    assert not screen.view.flights
    below = (place.x + place.w * 0.85, place.y + place.h * 0.15)
    assert _is_face(harness.pixel(*below))


# --- move readout ---------------------------------------------------------------------------------


def test_the_move_readout_says_a_keyboard_move_in_the_strip_and_the_sink(
    harness: Harness,
) -> None:
    from pyglet.window import key

    read: list[str] = []
    harness.window.readout_sink = read.append
    screen = practice_with_a_lone_ace(harness)
    _choose(harness, "Move readout", times=2)  # off, everyone's moves, your moves only
    assert screen.settings.readout == "yours"

    harness.key(key.N)
    harness.key(key.F)

    expected = "You: A♥ from the nerts pile to foundation 1"
    shown = [line.text for line, _ in screen.hud.strip.lines]
    assert expected in shown, shown
    assert read[-1] == expected and read.count(expected) == 1
    assert "Round 1: go!" in read  # what else the strip says goes to the sink too


def test_a_damaged_settings_file_is_said_on_the_menu(settings_dir: Path) -> None:
    from ui.app import make_window

    settings_dir.mkdir(parents=True)
    (settings_dir / "settings.json").write_text('{"left_handed": "very", "sounds": tru', "utf-8")
    window = make_window(1024, 720, clock=lambda: 100.0)
    try:
        window.show_menu()
        window.tick()
        texts = [item.text for item in window.current.items if hasattr(item, "text")]
        assert any("settings file" in text and "defaults" in text for text in texts), texts
        assert not window.settings.left_handed and window.settings.sounds
    finally:
        window.close()


def test_started_with_readout_the_moves_go_to_standard_output(harness: Harness, capfd: Any) -> None:
    from pyglet.window import key

    from ui.app import _use_readout
    from ui.config import WindowConfig

    _use_readout(harness.window, WindowConfig(readout=True))  # what `nerts-lan --readout` does
    screen = practice_with_a_lone_ace(harness)
    assert screen.settings.readout == "off"  # the option off: --readout reads everyone's

    harness.key(key.N)
    harness.key(key.F)

    out = capfd.readouterr().out
    assert "You: A♥ from the nerts pile to foundation 1\n" in out, out


def test_speaking_without_a_voice_says_so_once_and_the_readout_goes_on(
    harness: Harness,
) -> None:
    import shutil
    import sys

    from pyglet.window import key

    from ui.kit.speech import speech_command

    if speech_command(sys.platform, shutil.which) is not None:
        pytest.skip("this machine has a speech command: a move would really be spoken")
    screen = frozen_practice(harness, nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S 4S")
    _choose(harness, "Move readout")  # everyone's moves
    _choose(harness, "Speak moves")
    harness.key(key.N)
    harness.key(key._2)
    harness.key(key.SPACE)

    shown = [line.text for line, _ in screen.hud.strip.lines]
    problems = [text for text in shown if "cannot be spoken" in text]
    assert len(problems) == 1, shown
    assert "You: flipped, 3♠ on the waste" in shown, shown
