"""Hints: the next useful thing the person at this seat may do (pure, no window)."""

from __future__ import annotations

from nerts_lan.rules.actions import CallNerts, DeclareStuck, Flip, Play
from nerts_lan.rules.cards import DECK, Card
from nerts_lan.rules.state import State
from tests.kit import act, layout, ok, team
from ui.table.hints import StockWatch, next_hint

# Nothing of these fits anywhere: a king on the nerts pile, work piles of one colour and rank gaps.
_DEAD_WORK = ("9D", "7H", "5D", "3H")
_DEAD_STOCK = "QH JD 10H 8D 6H 4D 2H 10D"  # red on red, no ace: flipped, nothing ever plays


def _rivals() -> dict[str, object]:
    return team("blue", ("cy",), nerts="KH QH", work=("KS", "KC", "QS", "QC"), stock="2H 3H")


def _flip(state: State, by: str, watch: StockWatch) -> State:
    state = ok(act(state, by, "flip"))
    watch.observe(state, 0)
    return state


def test_the_second_partner_is_told_to_flip_not_to_wait() -> None:
    used = {"KD", *_DEAD_WORK}
    stock = " ".join([str(card) for card in DECK if str(card) not in used][:32])
    state = layout(
        team("red", ("ann", "bo"), nerts="KD", work=_DEAD_WORK, stock=stock),
        _rivals(),
    )
    hint = next_hint(state, "bo", StockWatch())
    assert hint.action == Flip("bo")
    assert "flip" in hint.text.lower()


def test_the_second_partner_is_shown_the_waste_card_that_plays() -> None:
    state = layout(
        team("red", ("ann", "bo"), nerts="KD", work=_DEAD_WORK, stock="QS QC", waste="8C"),
        _rivals(),
    )
    hint = next_hint(state, "bo", StockWatch())
    assert isinstance(hint.action, Play) and hint.action.card == Card.parse("8C")
    assert hint.text == "Hint: 8♣ from the waste to work pile 1"


def test_a_fruitless_pass_through_the_stock_suggests_stuck_then_waiting() -> None:
    state = layout(team("red", ("ann",), nerts="KD", work=_DEAD_WORK, stock=_DEAD_STOCK), _rivals())
    watch = StockWatch()
    assert next_hint(state, "ann", watch).action == Flip("ann")
    for _ in range(3):  # 8 cards: 3 + 3 + 2
        state = _flip(state, "ann", watch)
        assert next_hint(state, "ann", watch).action == Flip("ann")
    state = _flip(state, "ann", watch)  # the waste turned over: back where the pass began
    hint = next_hint(state, "ann", watch)
    assert hint.action == DeclareStuck("ann")
    assert "(S)" in hint.text or "press S" in hint.text

    state = ok(act(state, "ann", "stuck"))
    waiting = next_hint(state, "ann", watch)
    assert waiting.action is None and "wait" in waiting.text


def test_a_played_card_starts_a_new_pass() -> None:
    state = layout(
        team("red", ("ann",), nerts="JC KD", work=(*_DEAD_WORK[:3], ""), stock=_DEAD_STOCK),
        _rivals(),
    )
    watch = StockWatch()
    watch.observe(state, 0)
    for _ in range(4):
        state = _flip(state, "ann", watch)
    assert watch.fruitless
    state = ok(act(state, "ann", "play", "KD", "nerts", "w4"))
    assert next_hint(state, "ann", watch).action == Flip("ann")


def test_once_stuck_a_change_of_the_foundations_means_look_again() -> None:
    state = layout(
        team("red", ("ann",), nerts="KD", work=_DEAD_WORK, stock=_DEAD_STOCK),
        team("blue", ("cy",), nerts="KH AH", work=("KS", "KC", "QS", "QC"), stock="2H 3H"),
    )
    watch = StockWatch()
    watch.observe(state, 0)
    for _ in range(4):
        state = _flip(state, "ann", watch)
    state = ok(act(state, "ann", "stuck"))
    assert next_hint(state, "ann", watch).action is None
    state = ok(act(state, "cy", "play", "AH", "nerts", "f"))
    assert next_hint(state, "ann", watch).action == Flip("ann")


def test_an_empty_nerts_pile_means_call_nerts() -> None:
    state = layout(
        team("red", ("ann", "bo"), nerts="", work=("AS", "7H", "5D", "3H"), stock=_DEAD_STOCK),
        _rivals(),
    )
    for player in ("ann", "bo"):
        hint = next_hint(state, player, StockWatch())
        assert hint.action == CallNerts(player)
        assert "Nerts" in hint.text


def test_no_stock_and_no_waste_means_stuck() -> None:
    state = layout(team("red", ("ann",), nerts="KD", work=_DEAD_WORK), _rivals())
    assert next_hint(state, "ann", StockWatch()).action == DeclareStuck("ann")


def test_a_card_from_the_nerts_pile_comes_first() -> None:
    state = layout(
        team("red", ("ann",), nerts="KD 8C", work=_DEAD_WORK, stock="AS", waste="AD"), _rivals()
    )
    hint = next_hint(state, "ann", StockWatch())
    assert isinstance(hint.action, Play) and hint.action.source.kind == "nerts"
    assert "nerts pile" in hint.text


def test_moving_a_whole_work_pile_says_it_makes_room() -> None:
    # No foundation play opens a space here (with an ace on pile 1, sending it home would:
    # tests/test_teaching.py).
    state = layout(
        team("red", ("ann",), nerts="KD 7S", work=("9D", "6H", "7C", "2H"), stock="QH JD"),
        _rivals(),
    )
    hint = next_hint(state, "ann", StockWatch())
    assert isinstance(hint.action, Play) and str(hint.action.card) == "6H"
    assert hint.text.endswith("(it empties a work pile for your nerts cards)")
