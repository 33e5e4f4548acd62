"""Rivals you can read: with four other teams at 1024x640 their blocks are small, so the one the
player points at is drawn again, enlarged, on an opaque panel; it follows that team's play and
goes when the pointer leaves."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from nerts_lan.practice import BOT_NAMES, PracticeConfig
from tests.kit import layout, team
from tests.ui.conftest import Harness
from ui.table.peek import PEEK_SHARE

RIVALS = BOT_NAMES[:4]


def _four_rivals(harness: Harness) -> object:
    you = team("You", ("You",), nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S 4S 5S")
    rivals = [
        team(name, (name,), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D")
        for name in RIVALS
    ]
    config = PracticeConfig(player="You", opponents=4, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=layout(you, *rivals))
    harness.settle(0.2)
    return harness.window.current


def test_the_rival_pointed_at_is_enlarged_and_goes_when_the_pointer_leaves(
    window_of: Callable[[int, int], Harness],
) -> None:
    harness = window_of(1024, 640)
    screen = _four_rivals(harness)
    view = screen.view
    table_layout = view.layout
    rival = next(a for a in table_layout.teams if not a.own)
    own_h = table_layout.own_area.card_h
    assert rival.card_h < own_h * 0.55  # small: what this is for
    before = harness.pixels()

    harness.send("on_mouse_motion", int(rival.nerts.center[0]), int(rival.nerts.center[1]), 0, 0)
    peek = view.peek
    assert peek.team == rival.team and peek.rect is not None
    cards = [item for item in peek.drawn if hasattr(item, "scale_y")]
    assert len(cards) >= 6  # its nerts top, work piles, stock
    assert min(c.height for c in cards) >= own_h * PEEK_SHARE - 1  # at most of your size
    shown = harness.pixels()
    assert shown != before
    name_shown = any(getattr(item, "text", "") == RIVALS[rival.team - 1] for item in peek.drawn)
    assert name_shown

    inside = peek.rect.center  # over the enlarged block itself, it stays
    harness.send("on_mouse_motion", int(inside[0]), int(inside[1]), 0, 0)
    assert peek.team == rival.team
    own = table_layout.own_area.stock.center
    harness.send("on_mouse_motion", int(own[0]), int(own[1]), 0, 0)
    assert peek.team is None and peek.rect is None and not peek.drawn
    if os.environ.get("NERTS_SCREENSHOTS"):  # docs/: what the README shows
        harness.send(
            "on_mouse_motion", int(rival.nerts.center[0]), int(rival.nerts.center[1]), 0, 0
        )
        harness.save(Path(os.environ["NERTS_SCREENSHOTS"]) / "rivals.png")
