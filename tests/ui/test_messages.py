"""The message area in a real window: real keys and clicks, checked against the state and the
pixels, at the sizes a first-time player tried (issue 12)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.practice import PracticeConfig
from nerts_lan.rules.actions import Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.piles import ANY_FOUNDATION, NERTS, Pile
from nerts_lan.table.session import PeerGone
from tests.kit import layout, team
from tests.ui.conftest import Harness
from ui.kit.geometry import Rect
from ui.table.message_strip import MessageKind

SIZES = [(1024, 640), (1280, 800), (1920, 1080)]

MakeHarness = Callable[[int, int], Harness]


@pytest.fixture
def sized(settings_dir: Path) -> Iterator[MakeHarness]:
    """A game window of a chosen size, driven like ``harness``."""
    from ui.app import make_window

    windows: list[Any] = []

    def make(width: int, height: int) -> Harness:
        clock = [100.0]
        window = make_window(width, height, clock=lambda: clock[0])
        windows.append(window)
        return Harness(window, clock)

    try:
        yield make
    finally:
        for window in windows:
            window.close()
        os.environ.pop("NERTS_LAN_SKIP", None)


def _frozen_practice(
    harness: Harness, rivals: int = 2, rival_nerts: str = "KD QD", **piles_of_you: Any
) -> Any:
    """A practice table with a known deal; the bots never move (their delays are enormous)."""
    names = ("Ada", "Bo")[:rivals]
    rival_work = ("KC", "KH", "KS", "QC")
    state = layout(
        team("You", ("You",), **piles_of_you),
        *(team(name, (name,), nerts=rival_nerts, work=rival_work, stock="2D 3D") for name in names),
    )
    config = PracticeConfig(player="You", opponents=rivals, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=state)
    harness.frame()
    return harness.window.current


def _line_rects(screen: Any) -> list[Rect]:
    """Where each drawn message line is: its backdrop."""
    return [Rect(box.x, box.y, box.width, box.height) for _, box in screen.hud.strip.lines]


def _said(screen: Any) -> list[str]:
    return [shown.text for shown, _ in screen.hud.strip.lines]


def _name_rect(screen: Any) -> Rect:
    """The player's name above their tableau."""
    area = screen.view.layout.own_area
    return Rect(area.nerts.x, area.nerts.top, area.nerts.w * 2, area.area.top - area.nerts.top)


# Cards with nowhere to go: no black 6 or 5, no empty work pile, no foundation started.
STUCK_HAND = {"nerts": "9C 5H", "work": ("9D", "8D", "7H", "QC"), "stock": "3S 4S 6D"}


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_every_message_at_once_stays_readable_in_the_free_width(
    sized: MakeHarness, width: int, height: int
) -> None:
    from pyglet.window import key

    harness = sized(width, height)
    screen = _frozen_practice(harness, **STUCK_HAND)
    assert _said(screen) == ["Round 1: go!"]
    poll = screen.session.poll  # the table reports that a laptop left
    screen.session.poll = lambda now: [*poll(now), PeerGone("laptop-2", ("Ada", "Bo"))]
    harness.frame()
    screen.session.poll = poll
    harness.key(key.S)  # stuck: a lasting notice
    harness.key(key.H)  # a hint
    harness.click(*screen.view.layout.own_area.nerts.center)  # 5♥: nowhere to go
    harness.frame()

    said = _said(screen)  # the two newest; the others come back as these go
    assert len(said) == 2 and said[0] == "5♥ has nowhere to go", said
    assert said[1] == screen.messages.text_of(MessageKind.HINT), said
    assert screen.messages.text_of(MessageKind.TABLE) == "Ada, Bo left the table (a bot plays on)"
    assert screen.messages.text_of(MessageKind.STUCK) == "You are stuck"
    strip = screen.hud.strip.rect
    assert strip.w >= width * 0.45  # the free width, not a 200-pixel column
    lines = _line_rects(screen)
    for a, b in itertools.combinations(lines, 2):
        assert a.overlap(b) < 1.0, (a, b)
    obstacles = [p.rect for p in screen.shown] + [b.rect for b in screen.hud.buttons]
    obstacles.append(_name_rect(screen))
    for line, (shown, _) in zip(lines, screen.hud.strip.lines, strict=True):
        assert shown.content_height < shown.font_size * 2.6, shown.text  # one line, no wrap
        assert strip.x <= line.x and line.right <= strip.right
        for rect in obstacles:
            assert line.overlap(rect) < 1.0, (shown.text, line, rect)
    felt_green = harness.pixel(strip.x + 2, strip.y + 2)[1]
    for line in lines:  # each line on its own dark backdrop, not on the bare felt
        assert harness.pixel(line.x + 4, line.center[1])[1] < felt_green / 2


def test_two_quick_refusals_show_only_the_newer_and_never_cover_the_name(
    harness: Harness,
) -> None:
    screen = _frozen_practice(harness, **STUCK_HAND)
    area = screen.view.layout.own_area
    name = _name_rect(screen)
    before = _pixels_at(harness, _grid(name))

    harness.click(*area.nerts.center)  # 5♥
    harness.click(*area.work[1].center)  # 8♦

    assert screen.messages.text_of(MessageKind.REFUSAL) == "8♦ has nowhere to go"
    assert [text for text in _said(screen) if "nowhere" in text] == ["8♦ has nowhere to go"]
    assert _pixels_at(harness, _grid(name)) == before
    harness.settle(4.0)
    assert screen.messages.text_of(MessageKind.REFUSAL) is None
    assert _said(screen) == []


def test_a_refusal_speaks_the_players_vocabulary(harness: Harness) -> None:
    screen = _frozen_practice(harness, nerts="9C 4S", work=("9D", "8D", "", "2C"))
    area = screen.view.layout.own_area
    harness.drag(area.nerts.center, screen.view.layout.center.center)  # 4♠ to a foundation
    said = screen.messages.text_of(MessageKind.REFUSAL)
    assert said == "4♠ needs 3♠ on a foundation first"
    assert not any(code in said for code in ("4S", "w1", "f1"))


def test_the_rounds_go_is_gone_under_a_panel_and_once_the_round_ends(harness: Harness) -> None:
    from pyglet.window import key

    screen = _frozen_practice(harness, nerts="", work=("9D", "8D", "", "2C"))
    assert screen.messages.text_of(MessageKind.ROUND) == "Round 1: go!"
    harness.key(key.F1)
    assert screen.overlay is not None
    assert screen.messages.text_of(MessageKind.ROUND) is None
    harness.key(key.ESCAPE)

    screen.say(MessageKind.ROUND, "Round 1: go!")  # as if the round had just begun
    harness.key(key.H)
    harness.key(key.X)  # Nerts!: the nerts pile is empty
    harness.frame()
    assert screen.session.view.outcome is not None
    assert screen.messages.text_of(MessageKind.ROUND) is None
    assert screen.messages.text_of(MessageKind.HINT) is None
    assert not any("go!" in text for text in _said(screen))


def test_a_hint_goes_once_a_rival_takes_its_foundation(harness: Harness) -> None:
    from pyglet.window import key

    screen = _frozen_practice(
        harness, rivals=1, rival_nerts="2S AS", nerts="9C 2S", work=("9D", "8D", "7H", "QC")
    )
    session = screen.session  # the rival's moves, played now rather than after its delay
    session._add("Ada", Play("Ada", Card.parse("AS"), NERTS, ANY_FOUNDATION), harness.clock[0])
    harness.frame()
    harness.key(key.H)
    hint = screen.messages.text_of(MessageKind.HINT)
    assert hint is not None and "2♠" in hint and hint in _said(screen)

    # The rival plays its own 2♠ first: the hint was about a table that is gone.
    session._add("Ada", Play("Ada", Card.parse("2S"), NERTS, ANY_FOUNDATION), harness.clock[0])
    harness.frame()
    assert screen.messages.text_of(MessageKind.HINT) is None
    assert not any(text.startswith("Hint") for text in _said(screen))


def test_a_hint_stays_while_the_others_play_around_it(harness: Harness) -> None:
    from pyglet.window import key

    # Issue 25: at a busy table any move by anyone cleared the hint within 0.2 s.
    screen = _frozen_practice(
        harness, rivals=2, rival_nerts="2S AS", nerts="9C 2H", work=("9D", "8D", "7H", "AH")
    )
    harness.key(key.H)
    hint = screen.messages.text_of(MessageKind.HINT)
    assert hint is not None and "A♥" in hint
    outlined = screen.marking.hint
    session = screen.session  # the rivals' moves, played now rather than after their delays
    for rival in ("Ada", "Bo"):
        session._add(rival, Play(rival, Card.parse("AS"), NERTS, ANY_FOUNDATION), harness.clock[0])
        harness.frame()
        assert screen.messages.text_of(MessageKind.HINT) == hint
        assert hint in _said(screen) and screen.marking.hint == outlined

    # Our own move: the hint has done its work and goes.
    harness.key(key.H)  # (asked again: the same hint)
    session.submit(Play("You", Card.parse("AH"), Pile.parse("w4"), ANY_FOUNDATION))
    harness.frame()
    assert screen.messages.text_of(MessageKind.HINT) is None
    assert screen.marking.hint is None


def test_everyone_stuck_rotates_the_stocks_and_says_so(harness: Harness) -> None:
    from pyglet.window import key

    screen = _frozen_practice(harness, rivals=0, **STUCK_HAND)
    harness.key(key.S)  # the only team: everyone is stuck
    state = screen.session.view
    assert state.rotations == 1 and not state.teams[0].stuck
    said = screen.messages.text_of(MessageKind.ROTATION)
    assert said is not None and said.startswith("Everyone was stuck")
    assert said in _said(screen)
    assert screen.messages.text_of(MessageKind.STUCK) is None


def _pixels_at(harness: Harness, points: list[tuple[float, float]]) -> list[bytes]:
    """The colours at ``points``, from one drawing of the window (each pixel() draws anew)."""
    data, width, _ = harness.pixels()
    offsets = [(int(y) * width + int(x)) * 3 for x, y in points]
    return [data[offset : offset + 3] for offset in offsets]


def _grid(rect: Rect, steps: int = 6) -> list[tuple[float, float]]:
    return [
        (rect.x + rect.w * (i + 0.5) / steps, rect.y + rect.h * (j + 0.5) / steps)
        for i in range(steps)
        for j in range(steps)
    ]


def test_who_is_stuck_is_said_with_the_players_names() -> None:
    from ui.table.hud import stuck_line

    state = layout(
        team("Red", ("Ann",)), team("Blue", ("Bo", "Cy"), stuck=True), team("Green", ("Di",))
    )
    assert stuck_line(state.table, state, 0) == "Stuck: Bo & Cy"


def test_a_host_that_left_is_named_not_the_bots_it_ran() -> None:
    # Issue 25: "Bot 1 left the table" when the laptop that left was its host's.
    from nerts_lan.table.session import PeerReturned
    from ui.table.news import comings_and_goings

    assert comings_and_goings(PeerGone("ann-1", ("Ann", "Bot 1"), True, "Ann")) == (
        "Ann left the table (a bot plays on)"
    )
    assert comings_and_goings(PeerGone("ann-1", ("Bot 1",), True, "Ann")) == "Ann left the table"
    assert comings_and_goings(PeerReturned("ann-1", ("Ann", "Bot 1"), "Ann")) == "Ann is back"
