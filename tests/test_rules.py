"""One or more tests per rule of docs/rules.md, every rejection included."""

from __future__ import annotations

import pytest

from nerts_lan.rules.engine import DEAD_ROUND_ROTATIONS, round_scores
from nerts_lan.rules.state import Outcome, Rejection, RejectionKind
from tests.kit import act, foundations, layout, ok, piles, team

# --- teams and ownership -------------------------------------------------------------------------


def test_a_player_moves_only_its_own_teams_cards() -> None:
    state = layout(team("red", ("ann",), nerts="AS"), team("blue", ("bo",), nerts="AH"))
    result = act(state, "bo", "play", "AS", "nerts", "f")
    assert isinstance(result, Rejection)
    assert result.reason == "AS is not on top of the nerts pile"


def test_partners_share_one_tableau() -> None:
    state = layout(team("red", ("ann", "bo"), nerts="2S AS"))
    state = ok(act(state, "ann", "play", "AS", "nerts", "f"))
    state = ok(act(state, "bo", "play", "2S", "nerts", "f1"))
    assert foundations(state) == [{"cards": ["AS", "2S"], "owners": ["red", "red"]}]


def test_every_team_has_its_own_back_colour() -> None:
    state = layout(team("red", ("ann",)), team("blue", ("bo",)), team("green", ("cy",)))
    colours = state.table.back_colours
    assert len(colours) == 3 and len(set(colours)) == 3


def test_someone_not_at_the_table_is_rejected() -> None:
    state = layout(team(nerts="AS"))
    result = act(state, "zed", "play", "AS", "nerts", "f")
    assert isinstance(result, Rejection) and result.reason == "zed is not at this table"
    assert result.kind is RejectionKind.NOT_AT_TABLE


# --- foundations ---------------------------------------------------------------------------------


def test_an_ace_starts_a_foundation_numbered_in_order_of_creation() -> None:
    state = layout(team("red", ("ann",), nerts="AH", waste="AS"), team("blue", ("bo",), nerts="AC"))
    state = ok(act(state, "ann", "play", "AS", "waste", "f"))
    state = ok(act(state, "bo", "play", "AC", "nerts", "f"))
    state = ok(act(state, "ann", "play", "AH", "nerts", "f"))
    assert [f["cards"] for f in foundations(state)] == [["AS"], ["AC"], ["AH"]]
    assert [f["owners"] for f in foundations(state)] == [["red"], ["blue"], ["red"]]


def test_foundations_take_the_next_card_of_their_suit_from_any_team() -> None:
    state = layout(
        team("red", ("ann",), nerts="3S"),
        team("blue", ("bo",), nerts="2S"),
        foundations=(("AS", "red"),),
    )
    state = ok(act(state, "bo", "play", "2S", "nerts", "f1"))
    state = ok(act(state, "ann", "play", "3S", "nerts", "f"))
    assert foundations(state) == [{"cards": ["AS", "2S", "3S"], "owners": ["red", "blue", "red"]}]


def test_any_foundation_means_the_lowest_numbered_that_accepts() -> None:
    state = layout(
        team("red", ("ann",), nerts="2S"),
        team("blue", ("bo",)),
        foundations=(("AH", "red"), ("AS", "blue"), ("AS", "red")),
    )
    state = ok(act(state, "ann", "play", "2S", "nerts", "f"))
    assert [f["cards"] for f in foundations(state)] == [["AH"], ["AS", "2S"], ["AS"]]


def test_a_numbered_foundation_must_accept_the_card() -> None:
    state = layout(team(nerts="2S"), foundations=(("AH", "red"), ("AS", "red")))
    result = act(state, "ann", "play", "2S", "nerts", "f1")
    assert isinstance(result, Rejection) and result.reason == "f1 does not take 2S"
    assert foundations(ok(act(state, "ann", "play", "2S", "nerts", "f2")))[1]["cards"] == [
        "AS",
        "2S",
    ]


def test_a_foundation_that_does_not_exist_is_rejected() -> None:
    state = layout(team(nerts="2S"), foundations=(("AS", "red"),))
    result = act(state, "ann", "play", "2S", "nerts", "f3")
    assert isinstance(result, Rejection) and result.reason == "there is no pile f3"


def test_a_card_no_foundation_takes_is_rejected() -> None:
    state = layout(team(nerts="3S"), foundations=(("AS", "red"),))
    result = act(state, "ann", "play", "3S", "nerts", "f")
    assert isinstance(result, Rejection) and result.reason == "no foundation takes 3S"


def test_a_finished_foundation_takes_nothing_more_and_still_scores() -> None:
    spades = "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS"
    state = layout(
        team("red", ("ann",), nerts="AS", waste="KS"),
        team("blue", ("bo",)),
        foundations=((spades, " ".join(["blue"] * 12)),),
    )
    state = ok(act(state, "ann", "play", "KS", "waste", "f1"))
    assert foundations(state)[0]["cards"][-1] == "KS"
    assert state.f_next[0] == -1
    # Red's own ace of spades starts a second spade foundation.
    state = ok(act(state, "ann", "play", "AS", "nerts", "f"))
    assert len(foundations(state)) == 2
    assert round_scores(state) == {"red": 2, "blue": 12}


def test_nothing_leaves_a_foundation() -> None:
    state = layout(team(work=("", "", "", "")), foundations=(("AS", "red"),))
    result = act(state, "ann", "play", "AS", "f1", "w1")
    assert isinstance(result, Rejection) and result.reason == "cards never leave a foundation"
    result = act(state, "ann", "play", "AS", "f", "w1")
    assert isinstance(result, Rejection) and result.reason == "cards never leave a foundation"


def test_only_one_card_goes_to_a_foundation() -> None:
    state = layout(team(work=("3H 2S", "", "", "")), foundations=(("AH", "red"),))
    result = act(state, "ann", "play", "3H", "w1", "f")
    assert isinstance(result, Rejection)
    assert result.reason == "only the top card of w1 can go to a foundation"


def test_kings_option_lets_a_king_start_a_foundation_built_down() -> None:
    state = layout(team(nerts="QH KH"), kings=True)
    state = ok(act(state, "ann", "play", "KH", "nerts", "f"))
    state = ok(act(state, "ann", "play", "QH", "nerts", "f1"))
    assert foundations(state)[0]["cards"] == ["KH", "QH"]
    without = layout(team(nerts="KH"))
    result = act(without, "ann", "play", "KH", "nerts", "f")
    assert isinstance(result, Rejection) and result.reason == "no foundation takes KH"


def test_a_king_started_foundation_is_finished_at_the_ace() -> None:
    down = "KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S"
    state = layout(team(nerts="AS"), foundations=((down, " ".join(["red"] * 12)),), kings=True)
    state = ok(act(state, "ann", "play", "AS", "nerts", "f1"))
    assert state.f_next == (-1,)


# --- work piles ----------------------------------------------------------------------------------


def test_work_piles_build_down_in_alternating_colours() -> None:
    state = layout(team(nerts="9D", work=("10S", "10H", "", "")))
    state2 = ok(act(state, "ann", "play", "9D", "nerts", "w1"))
    assert piles(state2)["work"][0] == ["10S", "9D"]
    result = act(state, "ann", "play", "9D", "nerts", "w2")
    assert isinstance(result, Rejection) and result.reason == "w2 does not take 9D"


def test_a_work_pile_needs_exactly_one_rank_lower() -> None:
    state = layout(team(nerts="8D", work=("10S", "", "", "")))
    result = act(state, "ann", "play", "8D", "nerts", "w1")
    assert isinstance(result, Rejection) and result.reason == "w1 does not take 8D"


def test_a_stack_moves_with_every_card_on_top_of_its_bottom_card() -> None:
    state = layout(team(work=("KH QS JD", "KD", "", "")))
    state = ok(act(state, "ann", "play", "QS", "w1", "w2"))
    assert piles(state)["work"][:2] == [["KH"], ["KD", "QS", "JD"]]


def test_an_empty_work_pile_takes_any_card_or_stack() -> None:
    state = layout(team(nerts="7C", work=("KH QS JD", "5H", "", "")))
    state = ok(act(state, "ann", "play", "QS", "w1", "w3"))
    state = ok(act(state, "ann", "play", "7C", "nerts", "w4"))
    assert piles(state)["work"] == [["KH"], ["5H"], ["QS", "JD"], ["7C"]]


def test_a_card_not_in_the_named_work_pile_is_rejected() -> None:
    state = layout(team(work=("KH QS", "KS", "", "")))
    result = act(state, "ann", "play", "QS", "w2", "w3")
    assert isinstance(result, Rejection) and result.reason == "QS is not in w2"


def test_a_stack_cannot_move_onto_its_own_pile() -> None:
    state = layout(team(work=("KH QS", "", "", "")))
    result = act(state, "ann", "play", "QS", "w1", "w1")
    assert isinstance(result, Rejection) and result.reason == "QS is already in w1"


def test_a_work_pile_beyond_the_option_does_not_exist() -> None:
    state = layout(team(nerts="9D", work=("10S", "", "", "")))
    result = act(state, "ann", "play", "9D", "nerts", "w5")
    assert isinstance(result, Rejection) and result.reason == "there is no pile w5"
    result = act(state, "ann", "play", "10S", "w9", "w2")
    assert isinstance(result, Rejection) and result.reason == "there is no pile w9"


@pytest.mark.parametrize("count", [3, 5, 6])
def test_the_work_option_sets_the_number_of_work_piles(count: int) -> None:
    state = layout(team(nerts="9D", work=tuple([""] * count)), work=count)
    assert len(piles(state)["work"]) == count
    ok(act(state, "ann", "play", "9D", "nerts", f"w{count}"))
    assert isinstance(act(state, "ann", "play", "9D", "nerts", f"w{count + 1}"), Rejection)


def test_the_nerts_top_and_waste_top_are_the_only_playable_cards_there() -> None:
    state = layout(team(nerts="AS 2H", waste="AH 3C", work=("", "", "", "")))
    result = act(state, "ann", "play", "AS", "nerts", "f")
    assert isinstance(result, Rejection) and result.reason == "AS is not on top of the nerts pile"
    result = act(state, "ann", "play", "AH", "waste", "f")
    assert isinstance(result, Rejection) and result.reason == "AH is not on top of the waste"


@pytest.mark.parametrize("target, place", [("nerts", "nerts pile"), ("waste", "waste")])
def test_nothing_moves_into_the_nerts_pile_or_the_waste(target: str, place: str) -> None:
    state = layout(team(work=("5H", "", "", ""), nerts="6S", waste="6C"))
    result = act(state, "ann", "play", "5H", "w1", target)
    assert (
        isinstance(result, Rejection) and result.reason == f"nothing can be played onto the {place}"
    )


# --- slide under ---------------------------------------------------------------------------------


def test_slide_under_makes_a_new_bottom_card_while_a_space_exists() -> None:
    state = layout(team(nerts="10D", waste="10H", work=("9S 8H", "9C", "", "5S")))
    state = ok(act(state, "ann", "under", "10D", "nerts", "w1"))
    assert piles(state)["work"][0] == ["10D", "9S", "8H"]
    state = ok(act(state, "ann", "under", "10H", "waste", "w2"))
    assert piles(state)["work"][1] == ["10H", "9C"]


def test_slide_under_needs_an_empty_work_pile() -> None:
    state = layout(team(nerts="10D", work=("9S", "4C", "5D", "6S")))
    result = act(state, "ann", "under", "10D", "nerts", "w1")
    assert (
        isinstance(result, Rejection) and result.reason == "sliding under needs an empty work pile"
    )


def test_slide_under_needs_one_rank_higher_and_the_other_colour() -> None:
    state = layout(team(nerts="10C", work=("9S", "", "", "")))
    result = act(state, "ann", "under", "10C", "nerts", "w1")
    assert isinstance(result, Rejection) and result.reason == "10C cannot slide under w1"


def test_slide_under_only_from_nerts_or_waste_and_only_under_a_work_pile() -> None:
    state = layout(team(nerts="10D", work=("9S", "JS", "", "")), foundations=(("AS", "red"),))
    result = act(state, "ann", "under", "JS", "w2", "w1")
    assert isinstance(result, Rejection)
    assert result.reason == "only the nerts or waste top card can slide under"
    result = act(state, "ann", "under", "10D", "nerts", "f1")
    assert isinstance(result, Rejection) and result.reason == "a card slides only under a work pile"
    result = act(state, "ann", "under", "10D", "nerts", "w3")
    assert isinstance(result, Rejection) and result.reason == "w3 is empty: play onto it instead"


# --- stock and waste -----------------------------------------------------------------------------


def test_flip_turns_three_one_by_one_so_the_last_turned_is_on_top() -> None:
    state = layout(team(stock="2C 5S JD 4H", waste="9C"))
    state = ok(act(state, "ann", "flip"))
    assert piles(state)["stock"] == ["2C"]
    assert piles(state)["waste"] == ["9C", "4H", "JD", "5S"]


def test_flip_with_fewer_than_three_left_turns_those() -> None:
    state = layout(team(stock="2C 5S"))
    state = ok(act(state, "ann", "flip"))
    assert piles(state)["stock"] == [] and piles(state)["waste"] == ["5S", "2C"]


def test_flip_one_option() -> None:
    state = layout(team(stock="2C 5S JD"), flip=1)
    state = ok(act(state, "ann", "flip"))
    assert piles(state)["stock"] == ["2C", "5S"] and piles(state)["waste"] == ["JD"]


def test_flip_on_an_empty_stock_turns_the_waste_over_and_turns_nothing() -> None:
    state = layout(team(stock="2C 5S JD 4H"))
    state = ok(act(state, "ann", "flip"))
    state = ok(act(state, "ann", "flip"))
    assert piles(state)["waste"] == ["4H", "JD", "5S", "2C"]
    state = ok(act(state, "ann", "flip"))
    # The first card turned in the last pass (4H) is on top of the stock again.
    assert piles(state)["stock"] == ["2C", "5S", "JD", "4H"] and piles(state)["waste"] == []


def test_flip_with_stock_and_waste_empty_is_rejected() -> None:
    state = layout(team(nerts="AS"))
    result = act(state, "ann", "flip")
    assert (
        isinstance(result, Rejection) and result.reason == "the stock and the waste are both empty"
    )


# --- races ---------------------------------------------------------------------------------------


def test_a_race_for_one_foundation_is_settled_by_the_order() -> None:
    state = layout(
        team("red", ("ann",), nerts="2S"),
        team("blue", ("bo",), waste="2S"),
        foundations=(("AS", "red"),),
    )
    winner = ok(act(state, "bo", "play", "2S", "waste", "f1"))
    loser = act(winner, "ann", "play", "2S", "nerts", "f1")
    assert isinstance(loser, Rejection) and loser.reason == "f1 does not take 2S"
    assert foundations(winner)[0]["owners"] == ["red", "blue"]


def test_a_stale_move_is_rejected_rather_than_moving_another_card() -> None:
    state = layout(team("red", ("ann", "bo"), nerts="7H AS", work=("", "", "", "")))
    state = ok(act(state, "bo", "play", "AS", "nerts", "f"))
    result = act(state, "ann", "play", "AS", "nerts", "w1")
    assert isinstance(result, Rejection) and result.reason == "AS is not on top of the nerts pile"
    assert piles(state)["nerts"] == ["7H"]


def test_a_rejected_action_changes_nothing() -> None:
    state = layout(team(nerts="3S", work=("9D", "", "", "")))
    before = piles(state)
    assert isinstance(act(state, "ann", "play", "3S", "nerts", "f"), Rejection)
    assert piles(state) == before


# --- stuck ---------------------------------------------------------------------------------------


def test_stuck_stands_until_the_team_plays_a_card_and_flipping_does_not_end_it() -> None:
    state = layout(team("red", ("ann",), nerts="AS", stock="2C 3C"), team("blue", ("bo",)))
    state = ok(act(state, "ann", "stuck"))
    assert piles(state)["stuck"] is True
    state = ok(act(state, "ann", "flip"))
    assert piles(state)["stuck"] is True
    state = ok(act(state, "ann", "stuck"))
    assert piles(state)["stuck"] is True
    state = ok(act(state, "ann", "play", "AS", "nerts", "f"))
    assert piles(state)["stuck"] is False


def test_a_move_between_work_piles_or_a_slide_under_ends_stuck() -> None:
    state = layout(
        team("red", ("ann",), nerts="10D", work=("9S", "", "", "")), team("blue", ("bo",))
    )
    moved = ok(act(ok(act(state, "ann", "stuck")), "ann", "play", "9S", "w1", "w2"))
    assert piles(moved)["stuck"] is False
    slid = ok(act(ok(act(state, "ann", "stuck")), "ann", "under", "10D", "nerts", "w1"))
    assert piles(slid)["stuck"] is False


def test_when_every_team_stands_stuck_every_stock_rotates() -> None:
    state = layout(
        team("red", ("ann",), stock="1C 2C 3C".replace("1C", "AC"), waste="4C 5C"),
        team("blue", ("bo",), stock="9H", waste=""),
    )
    state = ok(act(state, "ann", "stuck"))
    state = ok(act(state, "bo", "stuck"))
    # Turning order was 3C 2C AC (stock from its top) then 4C 5C (waste as turned); its first card
    # goes to the bottom: 2C AC 4C 5C 3C, written bottom to top.
    assert piles(state, 0)["stock"] == ["3C", "5C", "4C", "AC", "2C"]
    assert piles(state, 0)["waste"] == []
    assert piles(state, 1)["stock"] == ["9H"]
    assert not piles(state, 0)["stuck"] and not piles(state, 1)["stuck"]
    assert state.rotations == 1


def test_the_round_ends_dead_after_three_fruitless_rotations() -> None:
    state = layout(team("red", ("ann",), stock="2C 3C"), team("blue", ("bo",), nerts="KH"))
    for rotation in range(DEAD_ROUND_ROTATIONS):
        state = ok(act(ok(act(state, "ann", "stuck")), "bo", "stuck"))
        assert state.rotations == rotation + 1 and state.outcome is None
    state = ok(act(ok(act(state, "ann", "stuck")), "bo", "stuck"))
    assert state.outcome == Outcome("dead")
    assert round_scores(state) == {"red": 0, "blue": -2}


def test_a_card_played_resets_the_count_of_fruitless_rotations() -> None:
    state = layout(team("red", ("ann",), stock="AC 3C"), team("blue", ("bo",)))
    state = ok(act(ok(act(state, "ann", "stuck")), "bo", "stuck"))
    state = ok(act(ok(act(state, "ann", "stuck")), "bo", "stuck"))
    assert state.rotations == 2
    state = ok(act(state, "ann", "flip"))
    assert piles(state)["waste"][-1] == "AC"
    state = ok(act(state, "ann", "play", "AC", "waste", "f"))
    assert state.rotations == 0


# --- Nerts and the end of the round -------------------------------------------------------------


def test_nerts_needs_an_empty_nerts_pile() -> None:
    state = layout(team(nerts="KS"))
    result = act(state, "ann", "nerts")
    assert isinstance(result, Rejection) and result.reason == "the nerts pile is not empty"


def test_nerts_ends_the_round_and_voids_every_later_action() -> None:
    state = layout(
        team("red", ("ann",), nerts="AS", waste="2S"),
        team("blue", ("bo",), nerts="AH"),
        caller_bonus=10,
    )
    state = ok(act(state, "ann", "play", "AS", "nerts", "f"))
    state = ok(act(state, "ann", "nerts"))
    assert state.outcome == Outcome("nerts", "ann")
    for late in (
        ("bo", "play", "AH", "nerts", "f"),
        ("ann", "flip"),
        ("bo", "stuck"),
        ("ann", "nerts"),
    ):
        result = act(state, *late)
        assert isinstance(result, Rejection) and result.reason == "the round is over"
        assert result.kind is RejectionKind.ROUND_OVER
    assert round_scores(state) == {"red": 1 + 10, "blue": -2}


def test_a_team_may_play_on_before_calling_nerts() -> None:
    state = layout(team(waste="AS"))
    state = ok(act(state, "ann", "play", "AS", "waste", "f"))
    state = ok(act(state, "ann", "nerts"))
    assert round_scores(state) == {"red": 1}


def test_scores_count_own_foundation_cards_and_minus_two_per_nerts_card() -> None:
    state = layout(
        team("red", ("ann",), nerts="5D 7C 9H"),
        team("blue", ("bo",)),
        foundations=(("AS 2S 3S", "red blue red"), ("AH", "blue")),
    )
    assert round_scores(state) == {"red": 2 - 6, "blue": 2}
