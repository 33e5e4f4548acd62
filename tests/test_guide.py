"""The guided first round's steps: one explanation at a time, on the hints (pure, no window)."""

from __future__ import annotations

from nerts_lan.rules.actions import CallNerts, Play
from nerts_lan.rules.engine import apply
from tests.kit import act, layout, ok, team
from ui.table.guide import LESSONS, Guide
from ui.table.hints import StockWatch

_RIVAL = team("blue", ("cy",), nerts="KH QH JH", work=("KS", "KC", "QS", "QC"), stock="2H 3H")


def test_each_kind_of_step_is_explained_once_one_explanation_at_a_time() -> None:
    state = layout(
        team("red", ("ann",), nerts="KD 6H 5C", work=("7S", "7C", "9D", "6D"), stock="QH JD"),
        _RIVAL,
    )
    guide, watch = Guide(), StockWatch()
    first = guide.step(state, "ann", watch)
    assert isinstance(first.action, Play) and str(first.action.card) == "5C"
    assert first.text.startswith(LESSONS["nerts"]) and LESSONS["onto"] not in first.text
    assert guide.step(state, "ann", watch) == first  # the same move: the same words

    state = ok(act(state, "ann", "play", "5C", "nerts", "w4"))
    second = guide.step(state, "ann", watch)
    assert isinstance(second.action, Play) and str(second.action.card) == "6H"
    assert second.text.startswith(LESSONS["onto"])  # the next explanation, with the next move

    state = ok(act(state, "ann", "play", "6H", "nerts", "w1"))
    third = guide.step(state, "ann", watch)  # 6♦ 5♣ onto 7♣: a space for the K♦
    assert isinstance(third.action, Play) and str(third.action.card) == "6D"
    assert third.text.startswith(LESSONS["move"])

    state = ok(act(state, "ann", "play", "6D", "w4", "w2"))
    state = ok(act(state, "ann", "play", "KD", "nerts", "w4"))
    fourth = guide.step(state, "ann", watch)
    assert fourth.action == CallNerts("ann")
    assert fourth.text.startswith(LESSONS["call"])


def test_a_kind_already_explained_gets_the_hint_alone() -> None:
    state = layout(
        team("red", ("ann",), nerts="KD 6H 5C", work=("7S", "7C", "9D", "6D"), stock="QH JD"),
        _RIVAL,
    )
    guide, watch = Guide(), StockWatch()
    guide.explained.update({"nerts", "onto"})
    step = guide.step(state, "ann", watch)
    assert step.text.startswith("Hint: 5♣ from your nerts pile")


def test_the_goal_comes_first_whatever_the_first_move() -> None:
    # Issue 25: the guide taught in deal order (the first move's rule), not the goal first.
    state = layout(
        team("red", ("ann",), nerts="KD QS", work=("AH", "9C", "8D", "3S"), stock="QH JD"),
        _RIVAL,
    )
    first = Guide().step(state, "ann", StockWatch())
    assert isinstance(first.action, Play) and str(first.action.card) == "AH"
    assert first.text.startswith(LESSONS["nerts"])


def test_a_lesson_the_player_had_no_time_to_act_on_comes_again() -> None:
    # Issue 25: a lesson was marked taught as soon as its step was computed, so a rival's play
    # that changed the step at once meant the lesson was never really shown.
    rival = team("blue", ("cy",), nerts="KH 2S", work=("KS", "KC", "QS", "QC"), stock="2H 3H")
    state = layout(
        team("red", ("ann",), nerts="KD 2S", work=("9D", "9C", "8D", "4H"), stock="QH JD"),
        rival,
        foundations=(("AS", "blue"),),
    )
    guide, watch = Guide(), StockWatch()
    first = guide.step(state, "ann", watch)
    assert isinstance(first.action, Play) and str(first.action.card) == "2S"
    assert first.text.startswith(LESSONS["nerts"])

    state = ok(act(state, "cy", "play", "2S", "nerts", "f"))  # the rival's 2♠ first
    second = guide.step(state, "ann", watch)
    assert second.action != first.action
    assert second.text.startswith(LESSONS["nerts"])  # not read yet: said again

    assert isinstance(second.action, Play)
    state = ok(apply(state, second.action))  # the player moves, having read it
    assert not guide.step(state, "ann", watch).text.startswith(LESSONS["nerts"])
