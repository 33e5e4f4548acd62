"""A race lost at a LAN table, in the real window: the card flashes in the winner's colour and
the message says who won and by how much."""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.actions import Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.piles import Pile
from tests.kit import layout, piles, team
from tests.ui.conftest import Harness
from tests.ui.table_time import TableTimeSession
from tests.waiting import until
from ui.kit.theme import TEAM_RGB


def _said(screen: Any) -> list[str]:
    return [shown.text for shown, _ in screen.hud.strip.lines]


def test_a_race_lost_to_an_earlier_stamp_flashes_the_winners_colour_and_says_by_how_much(
    harness: Harness,
) -> None:
    state = layout(
        team("You", ("You",), nerts="9C 5H", work=("9D", "6S", "", "2C")),
        team("Bo", ("Bo",), waste="5H", work=("KC", "KH", "KS", "QC")),
        foundations=(("AH 2H 3H 4H", "You You You You"),),
    )
    session = TableTimeSession(state, stamp=8_040_000)
    harness.window.start_session(session)
    harness.settle(0.2)
    screen = harness.window.current
    area = screen.view.layout.own_area
    nerts = area.nerts
    harness.drag(nerts.center, screen.view.layout.foundation_rect(0).center)
    harness.settle(0.5)
    assert piles(session.view)["nerts"] == ["9C"]  # shown at once: it counts, for now

    # Bo's 5♥ was stamped 40 ms earlier in table time: it takes the foundation.
    bo = Play("Bo", Card.parse("5H"), Pile.parse("waste"), Pile.parse("f1"))
    session.arrive((8_000_000, "bo-laptop"), bo)
    harness.frame()

    assert piles(session.view)["nerts"] == ["9C", "5H"]
    assert "Bo beat you to 5♥ by 40 ms" in _said(screen), _said(screen)
    key = (0, Card.parse("5H"))
    blue = TEAM_RGB[state.table.back_colours[1]]
    until(lambda: key not in screen.view.flights, what="the card back", between=harness.frame)
    face = (nerts.x + nerts.w * 0.85, nerts.y + nerts.h * 0.6)
    r, g, b = harness.pixel(*face)
    assert b > r + 60 and b > g + 30, (r, g, b)  # a white face tinted Bo's blue
    assert screen.view.race_flash.colour_of(key) == blue

    harness.settle(1.2)  # the flash is over: the card looks like itself again
    assert screen.view.sprites[key].color[:3] == (255, 255, 255)
    assert all(channel >= 200 for channel in harness.pixel(*face))


def test_with_reduced_motion_the_lost_card_is_tinted_but_does_not_shake() -> None:
    from types import SimpleNamespace

    from ui.kit.geometry import Rect
    from ui.table.race_flash import FLASH_SECONDS, RaceFlash

    place = Rect(100, 50, 40, 56)
    for shake, moved in ((True, True), (False, False)):
        flash = RaceFlash()
        sprite = SimpleNamespace(x=100, color=(255, 255, 255))
        flash.start(("k",), (40, 90, 200), 0.0)
        xs = set()
        for step in range(1, 10):
            flash.apply({("k",): sprite}, {("k",): place}, set(), FLASH_SECONDS * step / 10, shake)
            xs.add(sprite.x)
            assert sprite.color != (255, 255, 255)  # tinted either way
        assert (xs != {100}) is moved
