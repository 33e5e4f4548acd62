"""The state's wire codec: a round's ``State`` as plain JSON/msgpack-ready data and back.

``state_to_json`` is the scenario contract's state shape (docs/rules.md);
``state_snapshot`` adds what a peer that catches up needs (options, colours, rotations, outcome)
and ``state_from_snapshot`` reads it back, checking hostile input to the letter like a scenario:
``MalformedError`` with one line naming what is wrong. ``table_from_json`` and
``layout_from_json`` are the scenario runner's parsers of a table and of explicit piles.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any, Final

from nerts_lan.rules.actions import MalformedError, check_name
from nerts_lan.rules.cards import DECK, Card, CardError, card_color, card_rank, card_suit
from nerts_lan.rules.engine import DEAD_ROUND_ROTATIONS, deal_round
from nerts_lan.rules.state import Options, Outcome, State, Table, Tableau

__all__ = [
    "json_field",
    "layout_from_json",
    "opening_from_json",
    "state_from_snapshot",
    "state_snapshot",
    "state_to_json",
    "table_from_json",
]


def state_to_json(state: State) -> dict[str, Any]:
    """The contract's state object: teams with their piles, foundations, over and caller."""
    table = state.table
    teams = []
    for index, tableau in enumerate(state.teams):
        teams.append(
            {
                "name": table.team_names[index],
                "players": list(table.team_players[index]),
                "nerts": _card_names(tableau.nerts),
                "work": [_card_names(pile) for pile in tableau.work],
                "stock": _card_names(tableau.stock),
                "waste": _card_names(tableau.waste),
                "stuck": tableau.stuck,
            }
        )
    foundations = [
        {"cards": _card_names(cards), "owners": [table.team_names[o] for o in owners]}
        for cards, owners in zip(state.f_cards, state.f_owners)
    ]
    outcome = state.outcome
    return {
        "teams": teams,
        "foundations": foundations,
        "over": outcome is not None,
        "caller": outcome.caller if outcome is not None else None,
    }


def state_snapshot(state: State) -> dict[str, Any]:
    """The whole state as plain JSON/msgpack-ready data, for a peer that catches up."""
    view = state_to_json(state)
    outcome = state.outcome
    return {
        "options": state.table.options.to_wire(),
        "colours": list(state.table.back_colours),
        "teams": view["teams"],
        "foundations": view["foundations"],
        "rotations": state.rotations,
        "outcome": None if outcome is None else [outcome.ending, outcome.caller],
    }


def state_from_snapshot(data: Any) -> State:
    """The state a snapshot describes, checked as hostile input like a scenario."""
    if not isinstance(data, dict):
        raise MalformedError("a snapshot must be an object")
    fields = {"options": data.get("options", {}), "teams": data.get("teams")}
    initial = layout_from_json(
        table_from_json(fields), fields["teams"], data.get("foundations", [])
    )
    rotations = data.get("rotations", 0)
    if type(rotations) is not int or not 0 <= rotations <= DEAD_ROUND_ROTATIONS:
        raise MalformedError("snapshot field 'rotations' is out of range")
    colours = data.get("colours", [])
    if not (
        isinstance(colours, list)
        and len(colours) == len(initial.table.team_names)
        and all(isinstance(c, str) and 0 < len(c) <= 32 for c in colours)
    ):
        raise MalformedError("snapshot field 'colours' must name one colour per team")
    outcome = data.get("outcome")
    ending: Outcome | None = None
    if outcome is not None:
        if not (
            isinstance(outcome, list) and len(outcome) == 2 and outcome[0] in ("nerts", "dead")
        ):
            raise MalformedError("snapshot field 'outcome' is malformed")
        caller = outcome[1]
        if outcome[0] == "nerts" and caller not in initial.table.player_team:
            raise MalformedError("snapshot outcome names an unknown caller")
        if outcome[0] == "dead" and caller is not None:
            raise MalformedError("a dead round has no caller")
        ending = Outcome(outcome[0], caller)
    table = Table(
        initial.table.options, initial.table.team_names, initial.table.team_players, tuple(colours)
    )
    return State(
        table,
        initial.teams,
        f_cards=initial.f_cards,
        f_owners=initial.f_owners,
        f_next=initial.f_next,
        rotations=rotations,
        outcome=ending,
    )


def table_from_json(data: dict[str, Any]) -> Table:
    """The table of a scenario or snapshot object: its options and its teams' names and
    players."""
    options = _options(data.get("options", {}))
    teams_data = json_field(data, "teams", list, "the scenario")
    if not 1 <= len(teams_data) <= 8:
        raise MalformedError("'teams' must list 1 to 8 teams")
    names: list[str] = []
    players: list[tuple[str, ...]] = []
    seen_players: set[str] = set()
    for index, team in enumerate(teams_data):
        where = f"teams[{index}]"
        if not isinstance(team, dict):
            raise MalformedError(f"{where} must be an object")
        name = check_name(team.get("name"), f"{where}.name")
        if name in names:
            raise MalformedError(f"team name {name!r} is used twice")
        names.append(name)
        players.append(_players(team, where, seen_players))
    try:
        return Table(options, tuple(names), tuple(players))
    except ValueError as error:
        raise MalformedError(str(error)) from None


def opening_from_json(table: Table, data: dict[str, Any]) -> State:
    """A scenario's opening state: dealt from its ``seed``, or its explicit piles."""
    teams_data = data["teams"]
    if "seed" not in data:
        return layout_from_json(table, teams_data, data.get("foundations", []))
    seed = data["seed"]
    if not isinstance(seed, str):
        raise MalformedError("'seed' must be a string")
    for index, team in enumerate(teams_data):
        for pile in ("nerts", "work", "stock", "waste"):
            if pile in team:
                raise MalformedError(f"teams[{index}] gives '{pile}' together with 'seed'")
    if data.get("foundations"):
        raise MalformedError("'foundations' given together with 'seed'")
    opening = deal_round(table, seed)
    stuck = tuple(_bool(team, "stuck", f"teams[{i}]") for i, team in enumerate(teams_data))
    return State(table, tuple(t.with_stuck(s) for t, s in zip(opening.teams, stuck)))


def layout_from_json(table: Table, teams_data: list[Any], foundations_data: Any) -> State:
    """The state of explicit piles: each team's ``nerts``, ``work``, ``stock``, ``waste`` and
    ``stuck``, and the ``foundations`` with their owners, checked as hostile input."""
    decks: list[set[int]] = [set() for _ in teams_data]
    tableaus = tuple(
        _tableau(team, f"teams[{index}]", table.options.work_of(name), decks[index])
        for index, (team, name) in enumerate(zip(teams_data, table.team_names))
    )
    if not isinstance(foundations_data, list):
        raise MalformedError("'foundations' must be a list")
    foundations = [
        _foundation(foundation, f"foundations[{index}]", table, decks)
        for index, foundation in enumerate(foundations_data)
    ]
    return State.with_foundations(table, tableaus, foundations)


def json_field(data: dict[str, Any], name: str, kind: type, where: str) -> Any:
    """``data[name]``, which must be there and of type ``kind``; ``where`` names ``data``."""
    if name not in data:
        raise MalformedError(f"{where} is missing the field {name!r}")
    value = data[name]
    if not isinstance(value, kind):
        raise MalformedError(
            f"{where}.{name} must be a {'list' if kind is list else kind.__name__}"
        )
    return value


# --- helpers ------------------------------------------------------------------------------------

_OPTION_TYPES: Final = {
    "flip": int,
    "caller_bonus": int,
    "target": int,
    "kings": bool,
    "pile": int,
    "work": int,
}


def _options(data: Any) -> Options:
    if not isinstance(data, dict):
        raise MalformedError("'options' must be an object")
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "handicaps":
            values[name] = value
            continue
        expected = _OPTION_TYPES.get(name)
        if expected is None:
            raise MalformedError(f"unknown option {name!r}")
        if type(value) is not expected:
            kind = "true or false" if expected is bool else "a whole number"
            raise MalformedError(f"option {name!r} must be {kind}")
        values[name] = value
    try:
        return Options.from_wire(values)
    except ValueError as error:
        raise MalformedError(str(error)) from None


def _tableau(team: dict[str, Any], where: str, work_count: int, deck: set[int]) -> Tableau:
    nerts = _cards(json_field(team, "nerts", list, where), f"{where}.nerts", deck)
    work_data = json_field(team, "work", list, where)
    if len(work_data) != work_count:
        raise MalformedError(
            f"{where}.work has {len(work_data)} piles but the 'work' option is {work_count}"
        )
    work = tuple(
        _work_pile(pile_data, f"{where}.work[{position}]", deck)
        for position, pile_data in enumerate(work_data)
    )
    stock = _cards(json_field(team, "stock", list, where), f"{where}.stock", deck)
    waste_data = team.get("waste", [])
    if not isinstance(waste_data, list):
        raise MalformedError(f"{where}.waste must be a list of cards")
    waste = _cards(waste_data, f"{where}.waste", deck)
    stuck = _bool(team, "stuck", where)
    return Tableau(nerts=nerts, work=work, stock=stock, waste=waste, stuck=stuck)


def _work_pile(pile_data: Any, where: str, deck: set[int]) -> tuple[int, ...]:
    if not isinstance(pile_data, list):
        raise MalformedError(f"{where} must be a list of cards")
    pile = _cards(pile_data, where, deck)
    for lower, upper in pairwise(pile):
        if card_rank(upper) != card_rank(lower) - 1 or card_color(upper) == card_color(lower):
            raise MalformedError(f"{where} is not a legal run: {DECK[upper]} on {DECK[lower]}")
    return pile


def _foundation(
    foundation: Any, where: str, table: Table, decks: list[set[int]]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A foundation's (cards, owner team indexes); each card new to its owner's deck."""
    if not isinstance(foundation, dict):
        raise MalformedError(f"{where} must be an object")
    owner_names = json_field(foundation, "owners", list, where)
    cards_data = json_field(foundation, "cards", list, where)
    if len(owner_names) != len(cards_data):
        raise MalformedError(f"{where} has {len(cards_data)} cards but {len(owner_names)} owners")
    if not cards_data:
        raise MalformedError(f"{where} has no cards")
    owners = []
    for position, owner in enumerate(owner_names):
        if not isinstance(owner, str) or owner not in table.team_names:
            raise MalformedError(f"{where}.owners[{position}]: unknown team {owner!r}")
        owners.append(table.team_names.index(owner))
    cards: list[int] = []
    for position, (name, owner) in enumerate(zip(cards_data, owners)):
        cards.extend(_cards([name], f"{where}.cards[{position}]", decks[owner]))
    _check_foundation_run(cards, where, table.options.kings)
    return tuple(cards), tuple(owners)


def _check_foundation_run(cards: Sequence[int], where: str, kings: bool) -> None:
    first = card_rank(cards[0])
    if first == 13 and kings and len(cards) > 0:
        step = -1
    elif first == 1:
        step = 1
    else:
        start = "an ace or, with the kings option, a king" if kings else "an ace"
        raise MalformedError(f"{where} must start with {start}, not {DECK[cards[0]]}")
    for lower, upper in pairwise(cards):
        if card_suit(upper) != card_suit(lower) or card_rank(upper) != card_rank(lower) + step:
            raise MalformedError(f"{where} is not a legal run: {DECK[upper]} on {DECK[lower]}")


def _cards(names: list[Any], where: str, deck: set[int]) -> tuple[int, ...]:
    """Card values of a list of names, each new to its team's ``deck``."""
    cards = []
    for position, name in enumerate(names):
        if not isinstance(name, str):
            raise MalformedError(f"{where}[{position}] must be a card name")
        try:
            card = Card.parse(name)
        except CardError as error:
            raise MalformedError(f"{where}[{position}]: {error}") from None
        if card in deck:
            raise MalformedError(f"{where}[{position}]: {name} is twice in the same deck")
        deck.add(card)
        cards.append(card)
    return tuple(cards)


def _bool(data: dict[str, Any], name: str, where: str) -> bool:
    value = data.get(name, False)
    if type(value) is not bool:
        raise MalformedError(f"{where}.{name} must be true or false")
    return value


def _card_names(cards: Sequence[int]) -> list[str]:
    return [str(DECK[c]) for c in cards]


def _players(team: dict[str, Any], where: str, seen: set[str]) -> tuple[str, ...]:
    """A team's player names, each new to ``seen``."""
    team_players = json_field(team, "players", list, where)
    if not team_players:
        raise MalformedError(f"{where}.players must name at least one player")
    for position, player in enumerate(team_players):
        check_name(player, f"{where}.players[{position}]")
        if player in seen:
            raise MalformedError(f"player name {player!r} is used twice")
        seen.add(player)
    return tuple(team_players)
