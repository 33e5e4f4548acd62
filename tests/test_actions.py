"""Actions and cards: exact text and wire round trips; hostile wire input is refused by name."""

from __future__ import annotations

import pytest

from nerts_lan.actions import (
    CallNerts,
    DeclareStuck,
    Flip,
    MalformedError,
    Play,
    SlideUnder,
    action_from_wire,
)
from nerts_lan.cards import DECK, Card, CardError


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


ACTIONS = [
    Play("ann", Card.parse("AS"), "nerts", "f"),
    Play("ann", Card.parse("9D"), "w2", "w4"),
    Play("bo", Card.parse("2S"), "waste", "f12"),
    SlideUnder("bo", Card.parse("10D"), "nerts", "w1"),
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
        (
            {"by": "a", "do": "under", "card": "AS", "from": ["nerts"], "to": "w1"},
            "must be a pile name",
        ),
    ],
)
def test_hostile_wire_actions_are_refused_by_name(wire: object, message: str) -> None:
    with pytest.raises(MalformedError, match=message):
        action_from_wire(wire)
