"""The Nerts rules engine: a pure, deterministic fold of ordered actions over a round's state.

Every peer replays the same ordered log and must reach the same state, so this module uses only
the standard library, no randomness, no clock and no floats. States are immutable and share
their unchanged piles, which makes a snapshot free (keep the reference) and a rollback cheap
(replay the few pending actions from it).

- ``apply(state, action)`` returns the next ``State``, or a ``Rejection`` with a short reason that
  changes nothing (a race lost, a card no longer where the action says, a target that no longer
  takes it).
- ``legal_actions(state, player)`` lists what a player may do now, for bots, hints and auto-move.
- ``replay(initial, actions)`` folds a log and returns the final state and each action's result.
- ``state_digest(state)`` is a canonical hash, identical on every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from .cards import DECK, card_color, card_rank
from .deal import deal_team

__all__ = [
    "BACK_COLOURS",
    "DEAD_ROUND_ROTATIONS",
    "Options",
    "Outcome",
    "Rejection",
    "State",
    "Table",
    "Tableau",
    "apply",
    "deal_round",
    "legal_actions",
    "replay",
    "round_scores",
    "state_digest",
]

BACK_COLOURS: Final = ("red", "blue", "green", "purple", "orange", "teal", "brown", "grey")
"""Default card-back colours, one per team in order (a table has at most 8 teams)."""

DEAD_ROUND_ROTATIONS: Final = 3
"""Rotations with no card played after which the next all-stuck moment ends the round."""


@dataclass(frozen=True, slots=True)
class Options:
    """Table options (variants) chosen in the lobby; the defaults are RULES.md's."""

    flip: int = 3
    caller_bonus: int = 0
    target: int = 100
    kings: bool = False
    pile: int = 13
    work: int = 4

    def __post_init__(self) -> None:
        problem = _options_problem(self)
        if problem:
            raise ValueError(problem)

    def to_wire(self) -> dict[str, int | bool]:
        return {
            "flip": self.flip,
            "caller_bonus": self.caller_bonus,
            "target": self.target,
            "kings": self.kings,
            "pile": self.pile,
            "work": self.work,
        }


@dataclass(frozen=True, slots=True)
class Table:
    """Who plays in a round and with which options: fixed for the whole round."""

    options: Options
    team_names: tuple[str, ...]
    team_players: tuple[tuple[str, ...], ...]
    back_colours: tuple[str, ...] = ()
    """Each team's card-back colour (cosmetic: not part of the state hash); by default from
    ``BACK_COLOURS`` in team order."""
    player_team: dict[str, int] = field(init=False, compare=False, hash=False)
    fingerprint: bytes = field(init=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not 1 <= len(self.team_names) <= 8:
            raise ValueError("a table has 1 to 8 teams")
        if len(self.team_players) != len(self.team_names):
            raise ValueError("every team needs its list of players")
        if len(set(self.team_names)) != len(self.team_names):
            raise ValueError("team names must differ")
        player_team: dict[str, int] = {}
        for index, players in enumerate(self.team_players):
            if not players:
                raise ValueError(f"team {self.team_names[index]!r} has no player")
            for player in players:
                if player in player_team:
                    raise ValueError(f"player name {player!r} is used twice")
                player_team[player] = index
        object.__setattr__(self, "player_team", player_team)
        if not self.back_colours:
            object.__setattr__(self, "back_colours", BACK_COLOURS[: len(self.team_names)])
        elif len(self.back_colours) != len(self.team_names):
            raise ValueError("every team needs one back colour")
        material = repr((self.options.to_wire(), self.team_names, self.team_players))
        object.__setattr__(self, "fingerprint", hashlib.sha256(material.encode()).digest()[:16])

    def team_of(self, player: str) -> int | None:
        """The index of ``player``'s team, or None for someone not at the table."""
        return self.player_team.get(player)


class Tableau:
    """One team's own piles, each a tuple of card values from bottom to top."""

    __slots__ = ("nerts", "stock", "stuck", "waste", "work")

    def __init__(
        self,
        nerts: tuple[int, ...],
        work: tuple[tuple[int, ...], ...],
        stock: tuple[int, ...],
        waste: tuple[int, ...],
        stuck: bool,
    ) -> None:
        self.nerts = nerts
        self.work = work
        self.stock = stock
        self.waste = waste
        self.stuck = stuck

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tableau) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Tableau(nerts={_names(self.nerts)}, work={[_names(p) for p in self.work]}, "
            f"stock={_names(self.stock)}, waste={_names(self.waste)}, stuck={self.stuck})"
        )

    def cards(self) -> list[int]:
        """Every card of the tableau, pile after pile."""
        cards = list(self.nerts)
        for pile in self.work:
            cards.extend(pile)
        cards.extend(self.stock)
        cards.extend(self.waste)
        return cards

    def _key(self) -> tuple[object, ...]:
        return (self.nerts, self.work, self.stock, self.waste, self.stuck)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a round ended: by a Nerts call (with its caller) or dead (every team stuck too long)."""

    ending: Literal["nerts", "dead"]
    caller: str | None = None


@dataclass(frozen=True, slots=True)
class Rejection:
    """An action the rules refuse at its place in the order; it changes nothing."""

    reason: str


class State:
    """A round in play. Immutable by contract: ``apply`` builds a new one sharing unchanged piles.

    Foundations are kept as three parallel tuples, one entry per foundation in order of creation:
    its cards, the team index owning each card, and the card value it takes next (-1 once
    finished) so that "the lowest-numbered foundation that accepts this card" is one
    ``tuple.index`` call.
    """

    __slots__ = ("f_cards", "f_next", "f_owners", "outcome", "rotations", "table", "teams")

    def __init__(
        self,
        table: Table,
        teams: tuple[Tableau, ...],
        f_cards: tuple[tuple[int, ...], ...] = (),
        f_owners: tuple[tuple[int, ...], ...] = (),
        f_next: tuple[int, ...] = (),
        rotations: int = 0,
        outcome: Outcome | None = None,
    ) -> None:
        self.table = table
        self.teams = teams
        self.f_cards = f_cards
        self.f_owners = f_owners
        self.f_next = f_next
        self.rotations = rotations
        self.outcome = outcome

    def with_teams(self, teams: tuple[Tableau, ...]) -> State:
        """This state with other tableaux: foundations, rotations and outcome kept."""
        return State(
            self.table,
            teams,
            self.f_cards,
            self.f_owners,
            self.f_next,
            self.rotations,
            self.outcome,
        )

    @classmethod
    def with_foundations(
        cls,
        table: Table,
        teams: tuple[Tableau, ...],
        foundations: Sequence[tuple[Sequence[int], Sequence[int]]] = (),
        rotations: int = 0,
        outcome: Outcome | None = None,
    ) -> State:
        """A state whose foundations are given as (cards, owner team indexes) pairs."""
        f_cards = tuple(tuple(cards) for cards, _ in foundations)
        f_owners = tuple(tuple(owners) for _, owners in foundations)
        f_next = tuple(_next_wanted(cards) for cards in f_cards)
        return cls(table, teams, f_cards, f_owners, f_next, rotations, outcome)

    @property
    def over(self) -> bool:
        return self.outcome is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<State {state_digest(self).hex()[:12]} teams={self.table.team_names}>"

    def _key(self) -> tuple[object, ...]:
        return (self.table, self.teams, self.f_cards, self.f_owners, self.rotations, self.outcome)


def deal_round(table: Table, seed: str) -> State:
    """The opening state of a round: every team's deck dealt from the round ``seed``."""
    options = table.options
    teams = []
    for index in range(len(table.team_names)):
        nerts, work, stock = deal_team(seed, index, options.pile, options.work)
        teams.append(Tableau(nerts, work, stock, (), False))
    return State(table, tuple(teams))


def apply(state: State, action: Action) -> State | Rejection:
    """The state after ``action``, or the ``Rejection`` saying why it changes nothing."""
    if state.outcome is not None:
        return _ROUND_OVER
    team = state.table.player_team.get(action.by)
    if team is None:
        return Rejection(f"{action.by} is not at this table")
    handler = _HANDLERS.get(type(action))
    if handler is None:
        return Rejection(f"unknown action {type(action).__name__}")
    return handler(state, team, action)


def replay(initial: State, actions: Iterable[Action]) -> tuple[State, list[Rejection | None]]:
    """Fold ``actions`` in order; the final state and, per action, None or its rejection."""
    state = initial
    results: list[Rejection | None] = []
    for action in actions:
        after = apply(state, action)
        if type(after) is Rejection:
            results.append(after)
        else:
            state = after  # type: ignore[assignment]
            results.append(None)
    return state, results


def legal_actions(state: State, player: str) -> list[Action]:
    """Every action ``player`` may make now that the rules accept.

    Plays to the foundations name ``f`` (any foundation). Work-pile moves include every legal
    stack move, even ones that change nothing of value; bots and hints choose among them.

    It reads only what the player's team can see (the nerts and waste top cards, the work piles,
    whether the stock and waste are empty, the foundations), never a face-down card: bots rely on
    this to decide from a redacted state.
    """
    team = state.table.player_team.get(player)
    if state.outcome is not None or team is None:
        return []
    tableau = state.teams[team]
    work = tableau.work
    f_next = state.f_next
    kings = state.table.options.kings
    actions: list[Action] = []
    has_space = () in work

    singles: list[tuple[int, str]] = []
    if tableau.nerts:
        singles.append((tableau.nerts[-1], "nerts"))
    if tableau.waste:
        singles.append((tableau.waste[-1], "waste"))
    for index, pile in enumerate(work):
        if pile:
            singles.append((pile[-1], _WORK_NAMES[index]))
    for card, source in singles:
        rank = _RANK[card]
        if card in f_next or rank == 1 or (kings and rank == 13):
            actions.append(Play(player, DECK[card], source, "f"))

    for card, source in singles[: len(singles) - sum(1 for p in work if p)]:
        rank = _RANK[card]
        color = _COLOR[card]
        for index, pile in enumerate(work):
            target = _WORK_NAMES[index]
            if not pile or (_RANK[pile[-1]] == rank + 1 and _COLOR[pile[-1]] != color):
                actions.append(Play(player, DECK[card], source, target))
            elif has_space and _RANK[pile[0]] == rank - 1 and _COLOR[pile[0]] != color:
                actions.append(SlideUnder(player, DECK[card], source, target))

    for source_index, pile in enumerate(work):
        source = _WORK_NAMES[source_index]
        for card in pile:
            rank = _RANK[card]
            color = _COLOR[card]
            for index, dest in enumerate(work):
                if index == source_index:
                    continue
                if not dest or (_RANK[dest[-1]] == rank + 1 and _COLOR[dest[-1]] != color):
                    actions.append(Play(player, DECK[card], source, _WORK_NAMES[index]))

    if tableau.stock or tableau.waste:
        actions.append(Flip(player))
    actions.append(DeclareStuck(player))
    if not tableau.nerts:
        actions.append(CallNerts(player))
    return actions


def round_scores(state: State) -> dict[str, int]:
    """Each team's score as things stand: +1 per own card on foundations, -2 per nerts card left,
    and the caller bonus to the calling team."""
    table = state.table
    counts = [0] * len(table.team_names)
    for owners in state.f_owners:
        for owner in owners:
            counts[owner] += 1
    scores = {}
    for index, name in enumerate(table.team_names):
        scores[name] = counts[index] - 2 * len(state.teams[index].nerts)
    outcome = state.outcome
    if outcome is not None and outcome.caller is not None:
        caller_team = table.player_team[outcome.caller]
        scores[table.team_names[caller_team]] += table.options.caller_bonus
    return scores


def state_digest(state: State) -> bytes:
    """A canonical 16-byte hash of the whole state, identical on every machine and Python.

    It covers the table (options, teams, players), every pile in order, the stuck flags, the
    foundations with their owners, the rotation count and the outcome.
    """
    out = bytearray(state.table.fingerprint)
    for tableau in state.teams:
        out.append(len(tableau.nerts))
        out += bytes(tableau.nerts)
        for pile in tableau.work:
            out.append(len(pile))
            out += bytes(pile)
        out.append(len(tableau.stock))
        out += bytes(tableau.stock)
        out.append(len(tableau.waste))
        out += bytes(tableau.waste)
        out.append(tableau.stuck)
    out.append(len(state.f_cards))
    for cards, owners in zip(state.f_cards, state.f_owners):
        out.append(len(cards))
        out += bytes(cards)
        out += bytes(owners)
    out.append(state.rotations)
    outcome = state.outcome
    if outcome is None:
        out.append(0)
    else:
        out += b"\x01" if outcome.ending == "nerts" else b"\x02"
        out += (outcome.caller or "").encode("utf-8")
    return hashlib.blake2b(out, digest_size=16).digest()


# --- helpers ------------------------------------------------------------------------------------

_RANK: Final = tuple(card_rank(c) for c in range(52))
_COLOR: Final = tuple(card_color(c) for c in range(52))
_WORK_NAMES: Final = tuple(f"w{i}" for i in range(1, 10))
_ROUND_OVER: Final = Rejection("the round is over")
_NERTS, _WASTE, _WORK, _FOUNDATION, _ANY_FOUNDATION = range(5)
_PILE_REFS: dict[str, tuple[int, int]] = {
    "nerts": (_NERTS, 0),
    "waste": (_WASTE, 0),
    "f": (_ANY_FOUNDATION, 0),
}


def _pile_ref(name: str) -> tuple[int, int] | None:
    """(kind, zero-based index) of a pile name, or None for a name of no pile kind."""
    ref = _PILE_REFS.get(name)
    if ref is not None:
        return ref
    if len(name) < 2 or len(name) > 5 or name[0] not in "wf" or not name[1:].isdigit():
        return None
    if not name[1:].isascii() or name[1] == "0":
        return None
    ref = (_WORK if name[0] == "w" else _FOUNDATION, int(name[1:]) - 1)
    if len(_PILE_REFS) < 4096:
        _PILE_REFS[name] = ref
    return ref


def _names(cards: Iterable[int]) -> list[str]:
    return [str(DECK[c]) for c in cards]


def _next_wanted(cards: Sequence[int]) -> int:
    """The card value a foundation takes next, or -1 when it is finished."""
    if len(cards) >= 13:
        return -1
    top = cards[-1]
    return top + 1 if _RANK[cards[0]] == 1 else top - 1


def _options_problem(options: Options) -> str | None:
    # Options may come from outside (a lobby message, a saved log): check the types too.
    for name in ("flip", "caller_bonus", "target", "pile", "work"):
        value = getattr(options, name)
        if type(value) is not int:
            return f"option {name!r} must be a whole number"
    kings: object = options.kings
    if type(kings) is not bool:
        return "option 'kings' must be true or false"
    if options.flip not in (1, 3):
        return "option 'flip' must be 1 or 3"
    if not 0 <= options.caller_bonus <= 1000:
        return "option 'caller_bonus' must be from 0 to 1000"
    if not 1 <= options.target <= 100_000:
        return "option 'target' must be from 1 to 100000"
    if not 3 <= options.work <= 6:
        return "option 'work' must be from 3 to 6"
    if not 1 <= options.pile <= 52 - options.work:
        return f"option 'pile' must be from 1 to {52 - options.work}"
    return None


def _pile_refs(action: Play | SlideUnder) -> tuple[tuple[int, int], tuple[int, int]] | Rejection:
    """The (kind, index) of a card move's source and target, or why one names no pile."""
    source = _pile_ref(action.source)
    if source is None:
        return Rejection(f"there is no pile {action.source}")
    target = _pile_ref(action.target)
    if target is None:
        return Rejection(f"there is no pile {action.target}")
    return source, target


def _not_on_top(tableau: Tableau, kind: int, card: int) -> Rejection | None:
    """Why ``card`` cannot leave the nerts pile or the waste (``kind``), or None."""
    if kind == _NERTS:
        if not tableau.nerts or tableau.nerts[-1] != card:
            return Rejection(f"{DECK[card]} is not on top of the nerts pile")
    elif not tableau.waste or tableau.waste[-1] != card:
        return Rejection(f"{DECK[card]} is not on top of the waste")
    return None


# A card played (a play or a slide under, by any team) ends the player's team's stuck
# declaration and resets the count of fruitless rotations: the States built below leave
# ``rotations`` at its default of 0 on purpose, and build the team's Tableau with stuck=False.


def _play(state: State, team: int, action: Play) -> State | Rejection:
    card = action.card
    refs = _pile_refs(action)
    if isinstance(refs, Rejection):
        return refs
    (kind, index), target = refs
    tableau = state.teams[team]
    if kind in (_NERTS, _WASTE):
        problem = _not_on_top(tableau, kind, card)
        if problem is not None:
            return problem
        moving: tuple[int, ...] = (card,)
    elif kind == _WORK:
        if index >= len(tableau.work):
            return Rejection(f"there is no pile {action.source}")
        pile = tableau.work[index]
        if card not in pile:
            return Rejection(f"{card} is not in {action.source}")
        moving = pile[pile.index(card) :]
    else:
        return Rejection("cards never leave a foundation")

    target_kind, target_index = target
    if target_kind == _WORK:
        work = tableau.work
        if target_index >= len(work):
            return Rejection(f"there is no pile {action.target}")
        if kind == _WORK and target_index == index:
            return Rejection(f"{card} is already in {action.target}")
        dest = work[target_index]
        if dest and (_RANK[dest[-1]] != _RANK[card] + 1 or _COLOR[dest[-1]] == _COLOR[card]):
            return Rejection(f"{action.target} does not take {card}")
        new_work = list(work)
        new_work[target_index] = dest + moving
        if kind == _WORK:
            new_work[index] = work[index][: len(work[index]) - len(moving)]
            changed = Tableau(tableau.nerts, tuple(new_work), tableau.stock, tableau.waste, False)
        elif kind == _NERTS:
            changed = Tableau(
                tableau.nerts[:-1], tuple(new_work), tableau.stock, tableau.waste, False
            )
        else:
            changed = Tableau(
                tableau.nerts, tuple(new_work), tableau.stock, tableau.waste[:-1], False
            )
        teams = list(state.teams)
        teams[team] = changed
        return State(state.table, tuple(teams), state.f_cards, state.f_owners, state.f_next)

    if target_kind in (_FOUNDATION, _ANY_FOUNDATION):
        if len(moving) != 1:
            return Rejection(f"only the top card of {action.source} can go to a foundation")
        f_next = state.f_next
        if target_kind == _FOUNDATION:
            if target_index >= len(f_next):
                return Rejection(f"there is no pile {action.target}")
            if f_next[target_index] != card:
                return Rejection(f"{action.target} does not take {card}")
            slot = target_index
        elif card in f_next:
            slot = f_next.index(card)
        elif _RANK[card] == 1 or (_RANK[card] == 13 and state.table.options.kings):
            slot = len(f_next)
        else:
            return Rejection(f"no foundation takes {card}")
        if slot == len(f_next):
            f_cards = (*state.f_cards, (card,))
            f_owners = (*state.f_owners, (team,))
            f_next = (*f_next, card + 1 if _RANK[card] == 1 else card - 1)
        else:
            cards = state.f_cards[slot] + (card,)
            lst_cards = list(state.f_cards)
            lst_cards[slot] = cards
            f_cards = tuple(lst_cards)
            lst_owners = list(state.f_owners)
            lst_owners[slot] = state.f_owners[slot] + (team,)
            f_owners = tuple(lst_owners)
            lst_next = list(f_next)
            lst_next[slot] = _next_wanted(cards)
            f_next = tuple(lst_next)
        if kind == _NERTS:
            changed = Tableau(tableau.nerts[:-1], tableau.work, tableau.stock, tableau.waste, False)
        elif kind == _WASTE:
            changed = Tableau(tableau.nerts, tableau.work, tableau.stock, tableau.waste[:-1], False)
        else:
            new_work = list(tableau.work)
            new_work[index] = tableau.work[index][:-1]
            changed = Tableau(tableau.nerts, tuple(new_work), tableau.stock, tableau.waste, False)
        teams = list(state.teams)
        teams[team] = changed
        return State(state.table, tuple(teams), f_cards, f_owners, f_next)

    place = "nerts pile" if target_kind == _NERTS else "waste"
    return Rejection(f"nothing can be played onto the {place}")


def _slide_under(state: State, team: int, action: SlideUnder) -> State | Rejection:
    card = action.card
    refs = _pile_refs(action)
    if isinstance(refs, Rejection):
        return refs
    (kind, _), target = refs
    tableau = state.teams[team]
    if kind not in (_NERTS, _WASTE):
        return Rejection("only the nerts or waste top card can slide under")
    problem = _not_on_top(tableau, kind, card)
    if problem is not None:
        return problem
    target_kind, target_index = target
    if target_kind != _WORK:
        return Rejection("a card slides only under a work pile")
    work = tableau.work
    if target_index >= len(work):
        return Rejection(f"there is no pile {action.target}")
    if () not in work:
        return Rejection("sliding under needs an empty work pile")
    dest = work[target_index]
    if not dest:
        return Rejection(f"{action.target} is empty: play onto it instead")
    if _RANK[dest[0]] != _RANK[card] - 1 or _COLOR[dest[0]] == _COLOR[card]:
        return Rejection(f"{card} cannot slide under {action.target}")
    new_work = list(work)
    new_work[target_index] = (card, *dest)
    if kind == _NERTS:
        changed = Tableau(tableau.nerts[:-1], tuple(new_work), tableau.stock, tableau.waste, False)
    else:
        changed = Tableau(tableau.nerts, tuple(new_work), tableau.stock, tableau.waste[:-1], False)
    teams = list(state.teams)
    teams[team] = changed
    return State(state.table, tuple(teams), state.f_cards, state.f_owners, state.f_next)


def _flip(state: State, team: int, action: Flip) -> State | Rejection:
    tableau = state.teams[team]
    stock = tableau.stock
    if stock:
        count = min(state.table.options.flip, len(stock))
        turned = stock[: len(stock) - count - 1 : -1] if count < len(stock) else stock[::-1]
        changed = Tableau(
            tableau.nerts,
            tableau.work,
            stock[: len(stock) - count],
            tableau.waste + turned,
            tableau.stuck,
        )
    elif tableau.waste:
        changed = Tableau(tableau.nerts, tableau.work, tableau.waste[::-1], (), tableau.stuck)
    else:
        return Rejection("the stock and the waste are both empty")
    teams = list(state.teams)
    teams[team] = changed
    return State(
        state.table, tuple(teams), state.f_cards, state.f_owners, state.f_next, state.rotations
    )


def _declare_stuck(state: State, team: int, action: DeclareStuck) -> State | Rejection:
    tableau = state.teams[team]
    teams = list(state.teams)
    if not tableau.stuck:
        teams[team] = Tableau(tableau.nerts, tableau.work, tableau.stock, tableau.waste, True)
    if not all(t.stuck for t in teams):
        return State(
            state.table, tuple(teams), state.f_cards, state.f_owners, state.f_next, state.rotations
        )
    if state.rotations >= DEAD_ROUND_ROTATIONS:
        return State(
            state.table,
            tuple(teams),
            state.f_cards,
            state.f_owners,
            state.f_next,
            state.rotations,
            Outcome("dead"),
        )
    rotated = tuple(_rotate(t) for t in teams)
    return State(
        state.table, rotated, state.f_cards, state.f_owners, state.f_next, state.rotations + 1
    )


def _rotate(tableau: Tableau) -> Tableau:
    """Re-form the stock (stock in order, then the waste as turned) and move its top card to the
    bottom; the waste empties and the stuck declaration ends."""
    # In turning order: the stock from its top down, then the waste from its bottom up.
    order = tableau.stock[::-1] + tableau.waste
    if order:
        order = order[1:] + order[:1]
    return Tableau(tableau.nerts, tableau.work, order[::-1], (), False)


def _call_nerts(state: State, team: int, action: CallNerts) -> State | Rejection:
    if state.teams[team].nerts:
        return Rejection("the nerts pile is not empty")
    return State(
        state.table,
        state.teams,
        state.f_cards,
        state.f_owners,
        state.f_next,
        state.rotations,
        Outcome("nerts", action.by),
    )


_HANDLERS: Final[dict[type, Callable[[State, int, Any], State | Rejection]]] = {
    Play: _play,
    SlideUnder: _slide_under,
    Flip: _flip,
    DeclareStuck: _declare_stuck,
    CallNerts: _call_nerts,
}
