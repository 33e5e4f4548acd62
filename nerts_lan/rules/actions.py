"""Actions: small immutable values with a wire form of plain dicts of str.

The wire form is the scenario contract's: ``{"by": "ann", "do": "play", "card": "AS", "from":
"nerts", "to": "f"}``; a reaction (``React``, a quick word to the table that changes nothing of
the round) is ``{"by": "ann", "do": "react", "say": "nice"}``. ``action_from_wire`` checks
hostile input and raises ``MalformedError`` naming what is wrong; ``action_from_wire(a.to_wire())
== a`` for every action. Card moves hold their piles as ``Pile`` values, parsed once here at the
wire boundary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeAlias

from nerts_lan.rules.cards import Card, CardError
from nerts_lan.rules.piles import Pile, PileError

__all__ = [
    "ACTION_TYPES",
    "MAX_NAME_LENGTH",
    "REACTIONS",
    "Action",
    "CallNerts",
    "DeclareStuck",
    "Flip",
    "MalformedError",
    "Play",
    "React",
    "SlideUnder",
    "action_from_wire",
    "check_name",
    "parse_pile_field",
]

MAX_NAME_LENGTH: Final = 64
"""Longest player or team name accepted from outside."""


class MalformedError(ValueError):
    """Input that is not of the contract's form (as opposed to a move the rules do not allow)."""


@dataclass(frozen=True, slots=True)
class _CardMove:
    """A move that names its card, where it is and where it goes."""

    DO: ClassVar[str] = ""

    by: str
    card: Card
    source: Pile
    target: Pile

    def to_wire(self) -> dict[str, str]:
        return {
            "by": self.by,
            "do": self.DO,
            "card": str(self.card),
            "from": str(self.source),
            "to": str(self.target),
        }


@dataclass(frozen=True, slots=True)
class Play(_CardMove):
    """Move ``card`` from ``source`` to ``target``; from a work pile, with every card on it."""

    DO: ClassVar[str] = "play"


@dataclass(frozen=True, slots=True)
class SlideUnder(_CardMove):
    """Slide the nerts or waste top ``card`` under the work pile ``target`` (needs a space)."""

    DO: ClassVar[str] = "under"


@dataclass(frozen=True, slots=True)
class Flip:
    """Turn up to ``flip`` cards from the stock to the waste, or turn the waste over."""

    by: str

    def to_wire(self) -> dict[str, str]:
        return {"by": self.by, "do": "flip"}


@dataclass(frozen=True, slots=True)
class DeclareStuck:
    """Declare the player's team stuck."""

    by: str

    def to_wire(self) -> dict[str, str]:
        return {"by": self.by, "do": "stuck"}


@dataclass(frozen=True, slots=True)
class CallNerts:
    """Call Nerts: ends the round, allowed once the team's nerts pile is empty."""

    by: str

    def to_wire(self) -> dict[str, str]:
        return {"by": self.by, "do": "nerts"}


REACTIONS: Final = ("nice", "wow", "oops", "hot", "gg")
"""The reactions a player may send, by their wire names (the window words them: "Nice!")."""


@dataclass(frozen=True, slots=True)
class React:
    """A quick word to the table (one of ``REACTIONS``): ordered like every action so that every
    peer shows it, it changes nothing of the round (``nerts_lan.rules.reactions``)."""

    by: str
    say: str

    def to_wire(self) -> dict[str, str]:
        return {"by": self.by, "do": "react", "say": self.say}


Action: TypeAlias = Play | SlideUnder | Flip | DeclareStuck | CallNerts | React

ACTION_TYPES: Final = (Play, SlideUnder, Flip, DeclareStuck, CallNerts, React)
"""Every action class, for ``isinstance`` checks."""


def action_from_wire(data: Any) -> Action:
    """The action a wire dict describes; ``MalformedError`` names the first thing wrong."""
    if not isinstance(data, dict):
        raise MalformedError(f"an action must be an object, not {_type_name(data)}")
    by = check_name(data.get("by"), "by")
    do = data.get("do")
    if not isinstance(do, str):
        raise MalformedError(f"action field 'do' must be a string, not {_type_name(do)}")
    if do == "play" or do == "under":
        card_name = data.get("card")
        if not isinstance(card_name, str):
            raise MalformedError(
                f"action field 'card' must be a string, not {_type_name(card_name)}"
            )
        try:
            card = Card.parse(card_name)
        except CardError as error:
            raise MalformedError(str(error)) from None
        source = parse_pile_field(data.get("from"), "from")
        target = parse_pile_field(data.get("to"), "to")
        return (Play if do == "play" else SlideUnder)(by, card, source, target)
    if do == "react":
        return React(by, _reaction(data.get("say")))
    simple = _SIMPLE_ACTIONS.get(do)
    if simple is None:
        raise MalformedError(
            f"unknown action {do[:20]!r} (expected play, under, flip, stuck, nerts or react)"
        )
    return simple(by)


def _reaction(value: Any) -> str:
    """A reaction's ``say`` field: one of ``REACTIONS``."""
    if not isinstance(value, str):
        raise MalformedError(f"reaction field 'say' must be a string, not {_type_name(value)}")
    if value not in REACTIONS:
        raise MalformedError(
            f"unknown reaction {value[:20]!r} (expected {', '.join(REACTIONS[:-1])} or "
            f"{REACTIONS[-1]})"
        )
    return value


def check_name(value: Any, field: str) -> str:
    """A player or team name: a non-empty string of at most ``MAX_NAME_LENGTH`` characters."""
    if not isinstance(value, str):
        raise MalformedError(f"field {field!r} must be a string, not {_type_name(value)}")
    if not value or len(value) > MAX_NAME_LENGTH:
        raise MalformedError(f"field {field!r} must be 1 to {MAX_NAME_LENGTH} characters long")
    return value


def parse_pile_field(value: Any, field: str) -> Pile:
    """The pile a card move's ``field`` names: nerts, waste, wN, f or fN (never the stock)."""
    if not isinstance(value, str):
        raise MalformedError(f"field {field!r} must be a pile name, not {_type_name(value)}")
    try:
        pile = Pile.parse(value)
    except PileError:
        pile = None
    if pile is None or pile.kind == "stock":
        raise MalformedError(
            f"bad pile name {value!r} in {field!r} (expected nerts, waste, wN, f or fN)"
        )
    return pile


_SIMPLE_ACTIONS: Final[dict[str, type[Flip] | type[DeclareStuck] | type[CallNerts]]] = {
    "flip": Flip,
    "stuck": DeclareStuck,
    "nerts": CallNerts,
}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
