"""Small builders shared by the engine tests: layouts written as in the scenario contract."""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.actions import action_from_wire
from nerts_lan.rules.codec import state_to_json
from nerts_lan.rules.engine import apply
from nerts_lan.rules.scenario import load_scenario
from nerts_lan.rules.state import Rejection, State


def team(
    name: str = "red",
    players: tuple[str, ...] = ("ann",),
    nerts: str = "",
    work: tuple[str, ...] = ("", "", "", ""),
    stock: str = "",
    waste: str = "",
    stuck: bool = False,
) -> dict[str, Any]:
    """A team layout; piles are space-separated card names, bottom to top."""
    return {
        "name": name,
        "players": list(players),
        "nerts": nerts.split(),
        "work": [pile.split() for pile in work],
        "stock": stock.split(),
        "waste": waste.split(),
        "stuck": stuck,
    }


def layout(
    *teams: dict[str, Any], foundations: tuple[tuple[str, str], ...] = (), **options: Any
) -> State:
    """The opening state of a layout; foundations as ("AS 2S", "red red") pairs."""
    data = {
        "options": options,
        "teams": list(teams),
        "actions": [],
        "foundations": [{"cards": c.split(), "owners": o.split()} for c, o in foundations],
    }
    return load_scenario(data).initial


def act(
    state: State, by: str, do: str, card: str = "", source: str = "", target: str = ""
) -> State | Rejection:
    """Apply one action written as its wire fields."""
    wire: dict[str, Any] = {"by": by, "do": do}
    if card:
        wire.update(card=card, **{"from": source, "to": target})
    return apply(state, action_from_wire(wire))


def ok(result: State | Rejection) -> State:
    """The state of an accepted action (fails the test with the reason of a rejection)."""
    assert not isinstance(result, Rejection), result.reason
    return result


def piles(state: State, index: int = 0) -> dict[str, Any]:
    """The contract view of one team's tableau."""
    return state_to_json(state)["teams"][index]


def foundations(state: State) -> list[dict[str, Any]]:
    return state_to_json(state)["foundations"]
