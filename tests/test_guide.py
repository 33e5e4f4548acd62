"""The guided first round's steps: one explanation at a time, on the hints (pure, no window)."""

from __future__ import annotations

from nerts_lan.rules.actions import CallNerts, Play
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
