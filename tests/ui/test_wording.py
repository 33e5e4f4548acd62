"""Players' words for cards, piles and refusals: pure, no window."""

from __future__ import annotations

from typing import Any

import pytest

from nerts_lan.rules.actions import Action, CallNerts, Flip, Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.engine import DEAD_ROUND_ROTATIONS, apply
from nerts_lan.rules.piles import ANY_FOUNDATION, NERTS, WASTE, Pile, foundation_pile, work_pile
from nerts_lan.rules.state import Rejection, RejectionKind, State
from tests.kit import layout, team
from ui.kit.wording import (
    card_name,
    pile_name,
    player_words,
    refusal,
    stocks_rotated,
    team_label,
)


@pytest.mark.parametrize(
    ("name", "said"), [("4C", "4♣"), ("10H", "10♥"), ("AS", "A♠"), ("KD", "K♦"), ("QC", "Q♣")]
)
def test_a_card_is_named_with_its_suit_symbol(name: str, said: str) -> None:
    assert card_name(Card.parse(name)) == said


@pytest.mark.parametrize(
    ("pile", "said"),
    [
        (NERTS, "your nerts pile"),
        (WASTE, "the waste"),
        (work_pile(1), "work pile 2"),
        (ANY_FOUNDATION, "a foundation"),
        (foundation_pile(2), "foundation 3"),
        (Pile("stock"), "your stock"),
    ],
)
def test_a_pile_is_named_in_words(pile: Pile, said: str) -> None:
    assert pile_name(pile) == said


def test_the_wire_names_in_a_free_text_become_players_words() -> None:
    assert player_words("w1 does not take 5D") == "work pile 1 does not take 5♦"
    assert player_words("f12 does not take 10C") == "foundation 12 does not take 10♣"
    assert player_words("the nerts pile is not empty") == "the nerts pile is not empty"


def _table(**you: Any) -> State:
    return layout(
        team("You", ("You",), **you),
        team("Bo", ("Bo",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D"),
    )


def _refused(state: State, action: Action) -> Rejection:
    result = apply(state, action)
    assert isinstance(result, Rejection)
    return result


def test_a_card_with_no_legal_move_has_nowhere_to_go() -> None:
    state = _table(nerts="9C 5H", work=("9D", "8D", "7H", "2C"), stock="3S")
    action = Play("You", Card.parse("5H"), NERTS, work_pile(0))
    why = _refused(state, action)
    assert why.reason == "w1 does not take 5H"  # the engine's words stay the contract's
    said = refusal(action, state, why.kind, why.reason)
    assert said == "5♥ has nowhere to go"


def test_a_card_that_fits_elsewhere_says_what_it_goes_on() -> None:
    state = _table(nerts="9C 5H", work=("9D", "8D", "", "2C"))
    action = Play("You", Card.parse("5H"), NERTS, work_pile(0))
    why = _refused(state, action)
    said = refusal(action, state, why.kind, why.reason)
    assert said == "5♥ goes on a black 6, not on 9♦"


def test_a_king_goes_only_on_an_empty_work_pile() -> None:
    state = _table(nerts="9C KH", work=("9D", "8D", "", "2C"))
    action = Play("You", Card.parse("KH"), NERTS, work_pile(1))
    why = _refused(state, action)
    said = refusal(action, state, why.kind, why.reason)
    assert said == "K♥ goes only on an empty work pile, not on 8♦"


def test_a_card_early_for_a_foundation_names_the_card_it_needs() -> None:
    state = _table(nerts="9C 4S", work=("9D", "8D", "", "2C"))
    action = Play("You", Card.parse("4S"), NERTS, ANY_FOUNDATION)
    why = _refused(state, action)
    said = refusal(action, state, why.kind, why.reason)
    assert said == "4♠ needs 3♠ on a foundation first"


def test_a_lost_race_names_who_beat_you_to_the_card() -> None:
    state = _table(nerts="9C 5H")
    action = Play("You", Card.parse("5H"), NERTS, ANY_FOUNDATION)
    said = refusal(action, state, RejectionKind.LOST_RACE, "no foundation takes 5H", "Bo")
    assert said == "Bo beat you to 5♥"


@pytest.mark.parametrize(
    ("margin_us", "said"),
    [
        (40_000, "Bo beat you to 5♥ by 40 ms"),
        (400, "Bo beat you to 5♥ by less than 1 ms"),
        (1_250_000, "Bo beat you to 5♥ by 1.2 s"),
    ],
)
def test_a_lost_race_says_by_how_much_when_known(margin_us: int, said: str) -> None:
    state = _table(nerts="9C 5H")
    action = Play("You", Card.parse("5H"), NERTS, ANY_FOUNDATION)
    kind = RejectionKind.LOST_RACE
    assert refusal(action, state, kind, "no foundation takes 5H", "Bo", margin_us) == said


def test_a_lost_race_without_a_card_says_who_got_there_first() -> None:
    state = _table(nerts="9C 5H")
    said = refusal(CallNerts("You"), state, RejectionKind.LOST_RACE, "x", "Bo", 2_000)
    assert said == "Bo got there first by 2 ms"


@pytest.mark.parametrize(
    ("action", "kind", "said"),
    [
        (Flip("You"), RejectionKind.ILLEGAL, "Your stock and waste are both empty"),
        (CallNerts("You"), RejectionKind.ILLEGAL, "Call Nerts once your nerts pile is empty"),
        (Flip("You"), RejectionKind.ROUND_OVER, "The round is over"),
        (Flip("Zed"), RejectionKind.NOT_AT_TABLE, "You are watching this match"),
    ],
)
def test_other_refusals_are_said_for_players(
    action: Action, kind: RejectionKind, said: str
) -> None:
    state = _table(nerts="9C 5H")
    assert refusal(action, state, kind, "whatever the engine said") == said


def test_an_unforeseen_reason_still_speaks_the_players_vocabulary() -> None:
    state = _table(nerts="9C 5H", work=("9D", "8D", "7C 6H", "2C"))
    action = Play("You", Card.parse("7C"), work_pile(2), ANY_FOUNDATION)
    why = _refused(state, action)
    said = refusal(action, state, why.kind, why.reason)
    assert said == "Only the top card of work pile 3 can go to a foundation"


def test_the_stocks_rotating_is_said_and_the_last_rotation_warns() -> None:
    assert stocks_rotated(1).startswith("Everyone was stuck")
    assert "round ends" in stocks_rotated(DEAD_ROUND_ROTATIONS)
    assert "round ends" not in stocks_rotated(1)


def test_a_lan_team_is_called_by_its_players_not_its_colour() -> None:
    # Issue 25: a LAN table named friends "Red" and "Blue" (the match's names of the teams).
    state = layout(team("Red", ("Ann",)), team("Blue", ("Bo", "Cy")))
    table = state.table
    assert [team_label(table, i) for i in range(2)] == ["Ann", "Bo & Cy"]
    assert team_label(table, "Blue") == "Bo & Cy"


def test_a_winner_is_named_in_good_english() -> None:
    from ui.kit.wording import wins

    assert wins("Ann") == "Ann wins"
    assert wins("You") == "You win"
    assert wins("Ann & Bo") == "Ann & Bo win"
