"""Actions, cards and piles: exact text and wire round trips; hostile wire input is refused by
name."""

from __future__ import annotations

import pytest

from nerts_lan.rules.actions import (
    CallNerts,
    DeclareStuck,
    Flip,
    MalformedError,
    Play,
    SlideUnder,
    action_from_wire,
)
from nerts_lan.rules.cards import DECK, Card, CardError
from nerts_lan.rules.piles import (
    ANY_FOUNDATION,
    NERTS,
    STOCK,
    WASTE,
    Pile,
    PileError,
    foundation_pile,
    work_pile,
)


def test_every_card_round_trips_through_its_name() -> None:
    names = [str(card) for card in DECK]
    assert names[:3] == ["AS", "2S", "3S"] and names[-1] == "KC" and "10H" in names
    for card in DECK:
        assert Card.parse(str(card)) == card
        assert eval(repr(card)) == card
    assert Card.parse("10H").rank == 10 and Card.parse("10H").suit == "H"
    assert Card.parse("QD").is_red and not Card.parse("QC").is_red


@pytest.mark.parametrize("name", ["", "1S", "11H", "AX", "as", "10", "K", " AS", "AS ", "0D"])
def test_bad_card_names_are_refused(name: str) -> None:
    with pytest.raises(CardError, match="bad card name"):
        Card.parse(name)


@pytest.mark.parametrize(
    "name, pile",
    [
        ("nerts", NERTS),
        ("waste", WASTE),
        ("stock", STOCK),
        ("f", ANY_FOUNDATION),
        ("w1", Pile("work", 0)),
        ("w3", work_pile(2)),
        ("w12", Pile("work", 11)),
        ("f1", foundation_pile(0)),
        ("f9999", Pile("foundation", 9998)),
    ],
)
def test_every_pile_round_trips_through_its_name(name: str, pile: Pile) -> None:
    assert Pile.parse(name) == pile and str(pile) == name
    assert eval(repr(pile)) == pile and repr(pile) == f"Pile.parse({name!r})"
    assert hash(Pile.parse(name)) == hash(pile)


@pytest.mark.parametrize(
    "name", ["", "w", "w0", "f0", "w01", "w10000", "W1", "nerts ", "x", "w1.5", "w١", "stocks"]
)
def test_bad_pile_names_are_refused(name: str) -> None:
    with pytest.raises(PileError, match="bad pile name"):
        Pile.parse(name)


@pytest.mark.parametrize(
    "kind, index", [("work", None), ("nerts", 0), ("waste", 1), ("work", -1), ("deck", None)]
)
def test_impossible_piles_cannot_be_built(kind: str, index: int | None) -> None:
    with pytest.raises(PileError):
        Pile(kind, index)  # type: ignore[arg-type]


ACTIONS = [
    Play("ann", Card.parse("AS"), Pile.parse("nerts"), Pile.parse("f")),
    Play("ann", Card.parse("9D"), Pile.parse("w2"), Pile.parse("w4")),
    Play("bo", Card.parse("2S"), Pile.parse("waste"), Pile.parse("f12")),
    SlideUnder("bo", Card.parse("10D"), Pile.parse("nerts"), Pile.parse("w1")),
    Flip("ann"),
    DeclareStuck("ann"),
    CallNerts("bo"),
]


@pytest.mark.parametrize("action", ACTIONS, ids=repr)
def test_actions_round_trip_exactly_through_their_wire_form(action: object) -> None:
    wire = action.to_wire()  # type: ignore[attr-defined]
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in wire.items())
    back = action_from_wire(wire)
    assert back == action and type(back) is type(action)
    assert hash(back) == hash(action)


@pytest.mark.parametrize(
    "wire, message",
    [
        ("play", "an action must be an object"),
        ({"do": "flip"}, "'by' must be a string"),
        ({"by": "x" * 65, "do": "flip"}, "1 to 64 characters"),
        ({"by": "a", "do": "dance"}, "unknown action 'dance'"),
        ({"by": "a", "do": "play", "card": "ZZ", "from": "nerts", "to": "f"}, "bad card name"),
        ({"by": "a", "do": "play", "card": "AS", "from": "nerts"}, "'to' must be a pile name"),
        ({"by": "a", "do": "play", "card": "AS", "from": "w99999", "to": "f"}, "bad pile name"),
        ({"by": "a", "do": "play", "card": "AS", "from": "stock", "to": "f"}, "bad pile name"),
        (
            {"by": "a", "do": "under", "card": "AS", "from": ["nerts"], "to": "w1"},
            "must be a pile name",
        ),
    ],
)
def test_hostile_wire_actions_are_refused_by_name(wire: object, message: str) -> None:
    with pytest.raises(MalformedError, match=message):
        action_from_wire(wire)
