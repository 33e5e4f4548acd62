"""Layout and hit-testing: pure functions of the window size and the state, no OpenGL."""

from __future__ import annotations

import itertools

import pytest

from nerts_lan.rules.actions import Play, SlideUnder
from nerts_lan.rules.cards import DECK, Card
from nerts_lan.rules.engine import deal_round
from nerts_lan.rules.piles import NERTS, STOCK, WASTE, Pile, work_pile
from nerts_lan.rules.state import Options, Table
from tests.kit import layout, team
from ui.kit.geometry import Rect
from ui.table import intents
from ui.table.cursor_frame import from_table_units, to_table_units
from ui.table.layout import (
    ANY_FOUNDATION,
    PileRef,
    card_at,
    compute_layout,
    drop_targets,
    pile_at,
    placements,
)


def _table(teams: int, work: int = 4) -> Table:
    names = tuple(f"t{i}" for i in range(teams))
    return Table(Options(work=work), names, tuple((f"p{i}",) for i in range(teams)))


def _rects(area: object) -> list[Rect]:
    return [area.nerts, area.stock, area.waste, *area.work]  # type: ignore[attr-defined]


_SIZES = [(640, 420), (1280, 800), (1920, 1080), (800, 1000)]


@pytest.mark.parametrize(
    ("teams", "size", "work"),
    [
        *itertools.product(range(1, 9), _SIZES, [4]),
        (8, (1024, 720), 6),
        (6, (1280, 800), 3),
    ],
)
def test_every_pile_fits_the_window_and_no_two_overlap(
    teams: int, size: tuple[int, int], work: int
) -> None:
    width, height = size
    table_layout = compute_layout(width, height, teams, 0, work)
    rects = [rect for area in table_layout.teams for rect in _rects(area)]
    rects += [table_layout.foundation_rect(i) for i in range(4 * teams)]
    for rect in rects:
        assert rect.x >= 0 and rect.y >= 0 and rect.right <= width and rect.top <= height, rect
    for a, b in itertools.combinations(rects, 2):
        assert a.overlap(b) < 1.0, (a, b)


def test_the_local_tableau_is_the_largest_and_at_the_bottom() -> None:
    table_layout = compute_layout(1280, 800, 6, own=2)
    own = table_layout.own_area
    assert own.team == 2 and own.own
    for area in table_layout.teams:
        if area.team != 2:
            assert area.card_h < own.card_h
            assert area.nerts.y > own.nerts.y
    assert table_layout.center.y > own.nerts.y


def test_cards_grow_with_the_window() -> None:
    small = compute_layout(800, 500, 4, 0).own_area.card_h
    large = compute_layout(1600, 1000, 4, 0).own_area.card_h
    assert large > small * 1.5


def test_a_fanned_work_pile_is_squeezed_above_the_floor() -> None:
    area = compute_layout(1280, 800, 2, 0).own_area
    lowest = area.work_card(0, 19, 20)
    assert lowest.y >= area.floor - 0.5


def test_placements_show_every_work_card_and_only_the_tops_of_the_rest() -> None:
    state = layout(
        team("red", ("ann",), nerts="3C 9D AS", work=("4D", "KH QS", "", "9H"),
             stock="2C 5S", waste="JD 5H 6C 7D"),
        team("blue", ("bo",), nerts="2D", work=("", "", "", "")),
    )  # fmt: skip
    found = placements(compute_layout(1280, 800, 2, 0), state)
    faces = {str(DECK[p.card]) for p in found if p.card is not None and p.team == 0}
    assert faces == {"AS", "4D", "KH", "QS", "9H", "5H", "6C", "7D"}
    backs = [p for p in found if p.card is None and p.team == 0]
    assert {p.pile.kind for p in backs} == {"nerts", "stock"}


def test_the_topmost_card_under_the_pointer_is_picked() -> None:
    state = layout(team("red", ("ann",), nerts="AS", work=("KH QS JD", "", "", "")))
    table_layout = compute_layout(1280, 800, 1, 0)
    found = placements(table_layout, state)
    area = table_layout.own_area
    middle = area.work_card(0, 1, 3)
    hit = card_at(found, middle.center[0], middle.top - 2, 0)
    assert hit is not None and str(DECK[hit.card or 0]) == "QS"
    top = area.work_card(0, 2, 3)
    hit = card_at(found, *top.center, 0)
    assert hit is not None and str(DECK[hit.card or 0]) == "JD"
    assert pile_at(table_layout, *area.stock.center) == PileRef(0, STOCK)
    assert pile_at(table_layout, *table_layout.center.center) == ANY_FOUNDATION


def test_drop_targets_forgive_a_near_miss_but_not_a_far_one() -> None:
    state = layout(team("red", ("ann",), nerts="5H", work=("6S", "9D", "", "2C")))
    table_layout = compute_layout(1280, 800, 1, 0)
    area = table_layout.own_area
    source = PileRef(0, NERTS)
    landing = area.work_card(0, 1, 2)
    near_miss = landing.moved_to(landing.x + landing.w * 0.4, landing.y - landing.h * 0.3)
    assert drop_targets(table_layout, state, near_miss, source)[0] == PileRef(0, work_pile(0))
    far = landing.moved_to(area.waste.right + 200, 10)
    assert drop_targets(table_layout, state, far, source) == []
    middle = table_layout.center
    over_middle = landing.moved_to(middle.center[0], middle.center[1])
    assert drop_targets(table_layout, state, over_middle, source) == [ANY_FOUNDATION]


def test_a_drop_between_piles_goes_to_the_one_the_engine_accepts() -> None:
    state = layout(team("red", ("ann",), nerts="5H", work=("9D", "6S", "8C", "2C")))
    targets = [PileRef(0, work_pile(0)), PileRef(0, work_pile(1))]
    action = intents.drop_action(state, "ann", PileRef(0, NERTS), int(Card.parse("5H")), targets)
    assert action == Play("ann", Card.parse("5H"), Pile.parse("nerts"), Pile.parse("w2"))
    refused = intents.drop_action(
        state, "ann", PileRef(0, NERTS), int(Card.parse("5H")), targets[:1]
    )
    assert refused == Play(
        "ann", Card.parse("5H"), Pile.parse("nerts"), Pile.parse("w1")
    )  # submitted: says why not


def test_a_click_prefers_a_foundation_then_a_pile_with_cards() -> None:
    state = layout(team("red", ("ann",), nerts="AS", waste="5H", work=("", "6S", "", "4C")))
    nerts, waste = PileRef(0, NERTS), PileRef(0, WASTE)
    assert intents.click_action(state, "ann", nerts, int(Card.parse("AS"))) == Play(
        "ann", Card.parse("AS"), Pile.parse("nerts"), Pile.parse("f")
    )
    assert intents.click_action(state, "ann", waste, int(Card.parse("5H"))) == Play(
        "ann", Card.parse("5H"), Pile.parse("waste"), Pile.parse("w2")
    )


def test_a_click_slides_under_when_that_is_the_only_move() -> None:
    state = layout(team("red", ("ann",), nerts="5H", work=("4S 3H", "", "9D", "9C")))
    action = intents.click_action(state, "ann", PileRef(0, NERTS), int(Card.parse("5H")))
    # An empty pile takes anything, and comes after piles with cards and slides.
    assert action in (
        SlideUnder("ann", Card.parse("5H"), Pile.parse("nerts"), Pile.parse("w1")),
        Play("ann", Card.parse("5H"), Pile.parse("nerts"), Pile.parse("w2")),
    )


def test_keys_pick_and_move() -> None:
    state = layout(team("red", ("ann",), nerts="5H", work=("6S", "", "", "")))
    picked, action = intents.key_action(state, "ann", 0, None, "n")
    assert picked == intents.Selection(PileRef(0, NERTS)) and action is None
    picked, action = intents.key_action(state, "ann", 0, picked, "1")
    assert picked is None and action == Play(
        "ann", Card.parse("5H"), Pile.parse("nerts"), Pile.parse("w1")
    )


def test_cursor_units_round_trip_over_the_own_tableau_and_the_middle() -> None:
    table_layout = compute_layout(1280, 800, 3, 0)
    area = table_layout.own_area
    for x, y in (area.work[1].center, table_layout.center.center):
        u, v = to_table_units(table_layout, x, y)
        back = from_table_units(table_layout, 0, u, v)
        assert abs(back[0] - x) < 1 and abs(back[1] - y) < 1
    # Another team's pointer over its own tableau lands over that team's tableau here.
    u, v = to_table_units(table_layout, *area.nerts.center)
    x, y = from_table_units(table_layout, 1, u, v)
    other = table_layout.teams[1]
    assert other.nerts.inflate(other.card_w).contains(x, y)


def test_a_real_deal_places_every_visible_card_once() -> None:
    state = deal_round(_table(6), "seed")
    found = placements(compute_layout(1280, 800, 6, 0), state)
    keys = [p.key for p in found]
    assert len(keys) == len(set(keys))


# --- the left-handed layout (issue 25, accessibility) -------------------------------------------


@pytest.mark.parametrize(("teams", "size"), [(2, (1024, 720)), (5, (1280, 800)), (8, (640, 420))])
def test_the_left_handed_layout_puts_the_nerts_pile_on_the_right(
    teams: int, size: tuple[int, int]
) -> None:
    from ui.table.mirror import left_handed

    plain = compute_layout(*size, teams, 0)
    mirrored = left_handed(plain)
    own, flipped = plain.own_area, mirrored.own_area
    assert own.nerts.x < own.work[0].x < own.stock.x  # the usual: nerts pile at the left
    assert flipped.nerts.x > max(rect.right for rect in flipped.work) > flipped.stock.x
    assert flipped.waste.right < flipped.stock.x  # the waste outermost on the left, still fanned
    assert flipped.nerts.right == pytest.approx(own.area.right)  # the same band of the window
    assert flipped.work[0].x > flipped.work[-1].x  # work pile 1 next to the nerts pile
    rects = _rects(flipped)
    for a, b in itertools.combinations(rects, 2):
        assert a.overlap(b) < 1.0, (a, b)
    for rect in rects:
        assert rect.x >= 0 and rect.right <= size[0]
    # The foundations, the other teams and the message strip stay where they were.
    assert mirrored.center == plain.center and mirrored.messages == plain.messages
    assert [mirrored.foundation_rect(i) for i in range(4)] == [
        plain.foundation_rect(i) for i in range(4)
    ]
    assert [a for a in mirrored.teams if not a.own] == [a for a in plain.teams if not a.own]


def test_hit_testing_follows_the_left_handed_layout() -> None:
    from ui.table.mirror import left_handed

    state = layout(team("red", ("ann",), nerts="5H", work=("6S", "9D", "", "2C")))
    mirrored = left_handed(compute_layout(1280, 800, 1, 0))
    area = mirrored.own_area
    assert pile_at(mirrored, *area.nerts.center) == PileRef(0, NERTS)
    assert pile_at(mirrored, *area.stock.center) == PileRef(0, STOCK)
    found = placements(mirrored, state)
    nerts_card = card_at(found, *area.nerts.center, 0)
    assert nerts_card is not None and str(DECK[nerts_card.card or 0]) == "5H"
    landing = area.work_card(0, 1, 2)
    dropped = landing.moved_to(landing.x + 4, landing.y - 6)
    assert drop_targets(mirrored, state, dropped, PileRef(0, NERTS))[0] == PileRef(0, work_pile(0))


def test_a_pointer_over_a_mirrored_pile_is_over_that_pile_on_a_plain_screen() -> None:
    from ui.table.mirror import left_handed

    plain = compute_layout(1280, 800, 2, 0)
    mirrored = left_handed(plain)
    for rect_of in (lambda a: a.nerts, lambda a: a.stock, lambda a: a.work[2]):
        u, v = to_table_units(mirrored, *rect_of(mirrored.own_area).center)
        seen_by_partner = from_table_units(plain, 0, u, v)
        assert rect_of(plain.own_area).contains(*seen_by_partner)
        back = from_table_units(mirrored, 0, u, v)
        assert rect_of(mirrored.own_area).contains(*back)
