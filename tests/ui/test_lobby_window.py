"""What a first-time player trips over in the options and the lobby, in a real window."""

from __future__ import annotations

from typing import Any

import pytest

from nerts_lan.practice import PracticeConfig
from tests.kit import layout, team

from .conftest import Harness

pytestmark = pytest.mark.window

_RED = (204, 24, 36)
_BLUE = (22, 92, 210)


def _frozen_practice(harness: Harness, **piles_of_you: Any) -> Any:
    """A practice table with a known deal; the bot never moves (its delays are enormous)."""
    state = layout(
        team("You", ("You",), **piles_of_you),
        team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D"),
    )
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=state)
    harness.settle(0.2)
    return harness.window.current


def _count_near(harness: Harness, rect: Any, colour: tuple[int, int, int]) -> int:
    """Pixels of ``rect`` within a small distance of ``colour`` (a suit's ink)."""
    data, width, _ = harness.pixels()
    count = 0
    for y in range(int(rect.y), int(rect.top)):
        for x in range(int(rect.x), int(rect.right)):
            offset = (y * width + x) * 3
            if all(abs(data[offset + i] - colour[i]) < 40 for i in range(3)):
                count += 1
    return count


def _option_button(screen: Any, row: int) -> Any:
    """The value button of the Options row ``row`` (0 sounds, 1 four-colour, 2 card size)."""
    return screen.overlay.buttons[row]


def test_an_option_shows_its_new_value_at_once_and_the_cards_follow_a_few_frames_later(
    harness: Harness,
) -> None:
    from pyglet.window import key

    screen = _frozen_practice(harness, nerts="9C 5D", work=("9D", "6S", "", "2C"))
    nerts = screen.view.layout.own_area.nerts
    assert _count_near(harness, nerts, _RED) > 20 and _count_near(harness, nerts, _BLUE) == 0
    harness.key(key.O)
    four_colour = _option_button(screen, 1)
    assert four_colour.text.text == "off"

    harness.click(*four_colour.rect.center)
    # The button says "on" in the very next frame, while the cards are still being redrawn: the
    # click did not wait for 183 card images (that took seconds, and players clicked again).
    assert _option_button(screen, 1).text.text == "on"
    assert screen.view.atlas.four_colour is False
    # A player who changes their mind during the redraw is heard at once, and the last choice wins.
    harness.click(*four_colour.rect.center)
    assert _option_button(screen, 1).text.text == "off"
    harness.click(*four_colour.rect.center)
    assert _option_button(screen, 1).text.text == "on"
    harness.key(key.ESCAPE)
    harness.settle(1.0)

    assert screen.view.atlas.four_colour is True and screen.settings.four_colour
    nerts = screen.view.layout.own_area.nerts
    assert _count_near(harness, nerts, _BLUE) > 20 and _count_near(harness, nerts, _RED) == 0


def test_a_new_card_size_shows_on_its_button_at_once_and_on_the_table_once_drawn(
    harness: Harness,
) -> None:
    from pyglet.window import key

    screen = _frozen_practice(harness, nerts="9C 5D")
    before = screen.view.layout.own_area.nerts
    harness.key(key.O)
    size = _option_button(screen, 2)
    old_caption = size.text.text

    harness.click(*size.rect.center)
    assert _option_button(screen, 2).text.text != old_caption
    assert screen.view.layout.own_area.nerts == before
    harness.settle(1.0)

    after = screen.view.layout.own_area.nerts
    assert (after.w, after.h) != (before.w, before.h)
    assert screen.view.atlas.sizes["own"] == (round(after.w), round(after.h))
