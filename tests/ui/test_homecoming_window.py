"""A round that ends with a show: once a round is over, every card on the foundations (the ones
hidden under the top two included) flies home to the nerts pile of the team that played it,
one after another, and all are home before the scores come up; with reduced motion they stay
where they lie; the next deal starts from an empty middle."""

from __future__ import annotations

from typing import Any

from pyglet.window import key

from nerts_lan.practice import PracticeConfig
from nerts_lan.rules.cards import Card
from nerts_lan.rules.state import Options
from tests.kit import layout, team
from tests.ui.conftest import Harness
from ui.config import load_settings, save_settings
from ui.kit.geometry import Rect
from ui.table.homecoming import HOME_FLIGHT, LAST_DEPARTURE
from ui.table.overlays import ScoreOverlay
from ui.table.scoreboard import BANNER_SECONDS

YOU, ADA = 0, 1
ON_FOUNDATIONS = [(YOU, "AD"), (ADA, "2D"), (YOU, "3D"), (ADA, "AC")]
"""(owner, card) of every card the table below has on its foundations, bottom to top."""


def _last_play_made(harness: Harness) -> Any:
    """Practice where two teams have cards on the foundations, three on one of them (so one
    is not drawn during play), and the player's nerts pile is empty: X ends the round."""
    you = team("You", ("You",), nerts="", work=("9D", "6S", "", "2C"), stock="3S 4S 5S")
    ada = team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="3D")
    state = layout(you, ada, foundations=(("AD 2D 3D", "You Ada You"), ("AC", "Ada")), target=100)
    config = PracticeConfig(
        player="You", opponents=1, seed="t", delay_scale=1e6, options=Options(target=100)
    )
    harness.window.start_practice(config, first_deal=state)
    harness.settle(0.2)
    return harness.window.current


def _drawn(screen: Any, owner: int, name: str) -> Rect | None:
    return screen.view.shown.get((owner, Card.parse(name)))


def _nerts_pile(screen: Any, owner: int) -> Rect:
    area = next(a for a in screen.view.layout.teams if a.team == owner)
    return Rect(area.nerts.x, area.nerts.y, area.card_w, area.card_h)


def _near(a: Rect | None, b: Rect) -> bool:
    pairs = [] if a is None else [(a.x, b.x), (a.y, b.y), (a.w, b.w), (a.h, b.h)]
    return bool(pairs) and all(abs(p - q) <= 1 for p, q in pairs)


def _call_nerts(harness: Harness, screen: Any) -> None:
    harness.key(key.X)
    for _ in range(60):
        if screen.session.view.outcome is not None:
            return
        harness.frame(1 / 30)
    raise AssertionError("the round did not end")


def test_each_foundation_card_flies_home_to_its_team_one_after_another(harness: Harness) -> None:
    screen = _last_play_made(harness)
    assert _drawn(screen, YOU, "AD") is None  # under two others: not drawn during play
    middle = screen.view.layout.center
    _call_nerts(harness, screen)
    flights = {k: f for k, f in screen.view.flights.items() if (k[0], k[1]) in _keys()}
    assert len(flights) == len(ON_FOUNDATIONS), "every foundation card is on its way"
    leaving = sorted(flights.values(), key=lambda f: f.t0)
    assert len({f.t0 for f in leaving}) == len(leaving), "one after another, not all at once"
    assert all(middle.contains(f.start.x + 1, f.start.y + 1) for f in leaving)
    for _ in range(int((LAST_DEPARTURE + HOME_FLIGHT) * 30) + 3):
        harness.frame(1 / 30)
    assert not isinstance(screen.overlay, ScoreOverlay)  # home while the banner is still up
    assert (LAST_DEPARTURE + HOME_FLIGHT) < BANNER_SECONDS
    for owner, name in ON_FOUNDATIONS:
        assert _near(_drawn(screen, owner, name), _nerts_pile(screen, owner)), (owner, name)


def test_the_next_deal_starts_with_an_empty_middle(harness: Harness) -> None:
    screen = _last_play_made(harness)
    _call_nerts(harness, screen)
    for _ in range(600):
        panel = screen.overlay
        if isinstance(panel, ScoreOverlay) and panel.buttons[0].enabled:
            break  # the scores are up and their quiet moment is over
        harness.frame(1 / 30)
    harness.key(key.ENTER)  # Next round
    for _ in range(120):
        if screen.session.view.outcome is None and not screen.view.flights:
            break
        harness.frame(1 / 30)
    assert screen.session.view.outcome is None
    assert screen.view.gone_home is None
    middle = screen.view.layout.center
    drawn_in_middle = [r for r in screen.view.shown.values() if middle.contains(r.x + 1, r.y + 1)]
    assert drawn_in_middle == []


def test_with_reduced_motion_the_foundations_stay_put(harness: Harness) -> None:
    save_settings(load_settings().with_(reduced_motion=True))
    harness.window.settings = load_settings()
    screen = _last_play_made(harness)
    before = _drawn(screen, YOU, "3D")
    assert before is not None
    _call_nerts(harness, screen)
    harness.settle(BANNER_SECONDS)
    assert _drawn(screen, YOU, "3D") == before


def _keys() -> set[tuple[int, int]]:
    return {(owner, Card.parse(name)) for owner, name in ON_FOUNDATIONS}
