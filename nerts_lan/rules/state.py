"""The values of a round: its table and options, each team's tableau, the state, its digest.

Plain immutable values with no rules in them: ``engine`` folds actions over them. ``State`` and
``Tableau`` share their unchanged piles between versions, so a snapshot is free (keep the
reference). ``state_digest`` is the canonical hash every peer compares.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Final, Literal

from nerts_lan.rules.cards import DECK, card_rank
from nerts_lan.rules.handicap import Handicap, check_team_name, handicaps_from_wire
from nerts_lan.rules.piles import Pile

__all__ = [
    "BACK_COLOURS",
    "Handicap",
    "Options",
    "Outcome",
    "Rejection",
    "RejectionKind",
    "State",
    "Table",
    "Tableau",
    "next_wanted",
    "state_digest",
]

BACK_COLOURS: Final = ("red", "blue", "green", "purple", "orange", "teal", "brown", "grey")
"""Default card-back colours, one per team in order (a table has at most 8 teams)."""


@dataclass(frozen=True, slots=True)
class Options:
    """Table options (variants) chosen in the lobby; the defaults are docs/rules.md's.

    ``handicaps`` are (team name, ``Handicap``) pairs, kept sorted by name with default handicaps
    dropped, so equal choices give equal options; the wire form has ``handicaps`` only when
    there is one, which keeps a table without them byte-identical to before they existed."""

    flip: int = 3
    caller_bonus: int = 0
    target: int = 100
    kings: bool = False
    pile: int = 13
    work: int = 4
    handicaps: tuple[tuple[str, Handicap], ...] = ()

    def __post_init__(self) -> None:
        problem = _options_problem(self)
        if problem:
            raise ValueError(problem)
        object.__setattr__(self, "handicaps", _normal_handicaps(self))

    def to_wire(self) -> dict[str, object]:
        wire: dict[str, object] = {
            "flip": self.flip,
            "caller_bonus": self.caller_bonus,
            "target": self.target,
            "kings": self.kings,
            "pile": self.pile,
            "work": self.work,
        }
        if self.handicaps:
            wire["handicaps"] = {name: h.to_wire() for name, h in self.handicaps}
        return wire

    @classmethod
    def from_wire(cls, data: object) -> Options:
        """Options from their wire object; ``ValueError`` names the bad option."""
        if not isinstance(data, dict):
            raise ValueError("table options must be an object")
        values = dict(data)
        if "handicaps" in values:
            values["handicaps"] = handicaps_from_wire(values["handicaps"])
        unknown = sorted(str(k)[:20] for k in values if k not in _OPTION_NAMES)
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}")
        return cls(**values)

    def handicap_of(self, team: str) -> Handicap:
        """Team ``team``'s handicap (the default one if it has none)."""
        return next((h for name, h in self.handicaps if name == team), _NO_HANDICAP)

    def pile_of(self, team: str) -> int:
        """The size of team ``team``'s nerts pile at the deal."""
        pile = self.handicap_of(team).pile
        return self.pile if pile is None else pile

    def work_of(self, team: str) -> int:
        """Team ``team``'s number of work piles."""
        work = self.handicap_of(team).work
        return self.work if work is None else work

    def for_teams(self, teams: Iterable[str]) -> Options:
        """These options with only the handicaps of ``teams`` (a round's seated teams)."""
        names = set(teams)
        kept = tuple(pair for pair in self.handicaps if pair[0] in names)
        return self if kept == self.handicaps else replace(self, handicaps=kept)


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
        for name, _ in self.options.handicaps:
            if name not in self.team_names:
                raise ValueError(f"option 'handicaps' names {name!r}, not a team at this table")
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
        *,
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

    def with_work(self, index: int, pile: tuple[int, ...]) -> Tableau:
        """This tableau with work pile ``index`` (from 0) replaced by ``pile``."""
        work = list(self.work)
        work[index] = pile
        return Tableau(
            nerts=self.nerts,
            work=tuple(work),
            stock=self.stock,
            waste=self.waste,
            stuck=self.stuck,
        )

    def take_top(self, source: Pile, count: int = 1) -> Tableau:
        """This tableau without the top ``count`` cards of ``source``: the nerts pile, the waste
        or a work pile (which must exist)."""
        if source.kind == "work":
            assert source.index is not None
            pile = self.work[source.index]
            return self.with_work(source.index, pile[: len(pile) - count])
        nerts, waste = self.nerts, self.waste
        if source.kind == "nerts":
            nerts = nerts[: len(nerts) - count]
        else:
            waste = waste[: len(waste) - count]
        return Tableau(nerts=nerts, work=self.work, stock=self.stock, waste=waste, stuck=self.stuck)

    def with_stuck(self, stuck: bool) -> Tableau:
        """This tableau with its team's stuck declaration standing (True) or ended (False)."""
        return Tableau(
            nerts=self.nerts, work=self.work, stock=self.stock, waste=self.waste, stuck=stuck
        )

    def _key(self) -> tuple[object, ...]:
        return (self.nerts, self.work, self.stock, self.waste, self.stuck)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a round ended: by a Nerts call (with its caller) or dead (every team stuck too long)."""

    ending: Literal["nerts", "dead"]
    caller: str | None = None


class RejectionKind(Enum):
    """Why an action does not count, as a value (the wire form keeps only the reason)."""

    ILLEGAL = "illegal"
    """The rules do not allow it at its place in the order (the engine's usual refusal)."""
    ROUND_OVER = "round_over"
    """The round had ended (or no round was in play)."""
    NOT_AT_TABLE = "not_at_table"
    """Its player does not play at this table."""
    NOT_YOUR_SEAT = "not_your_seat"
    """The peer that sent it does not play that seat (the replica's ``authorize``)."""
    MALFORMED = "malformed"
    """The payload is not an action at all."""
    LOST_RACE = "lost_race"
    """It counted in the view until another player's earlier-ordered action took its place."""
    TOO_SOON = "too_soon"
    """A reaction less than a second (of table time) after the player's last one."""


@dataclass(frozen=True, slots=True)
class Rejection:
    """An action refused at its place in the order; it changes nothing. ``reason`` is a short
    phrase for people, ``kind`` what a program branches on."""

    reason: str
    kind: RejectionKind = RejectionKind.ILLEGAL


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
        *,
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
            f_cards=self.f_cards,
            f_owners=self.f_owners,
            f_next=self.f_next,
            rotations=self.rotations,
            outcome=self.outcome,
        )

    def with_team(self, team: int, tableau: Tableau) -> State:
        """This state with team ``team``'s tableau replaced: all else kept."""
        teams = list(self.teams)
        teams[team] = tableau
        return State(
            self.table,
            tuple(teams),
            f_cards=self.f_cards,
            f_owners=self.f_owners,
            f_next=self.f_next,
            rotations=self.rotations,
            outcome=self.outcome,
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
        return cls(
            table,
            teams,
            f_cards=f_cards,
            f_owners=tuple(tuple(owners) for _, owners in foundations),
            f_next=tuple(next_wanted(cards) for cards in f_cards),
            rotations=rotations,
            outcome=outcome,
        )

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


def next_wanted(cards: Sequence[int]) -> int:
    """The card value a foundation of ``cards`` (bottom first) takes next; -1 once finished."""
    if len(cards) >= 13:
        return -1
    top = cards[-1]
    return top + 1 if card_rank(cards[0]) == 1 else top - 1


# --- helpers ------------------------------------------------------------------------------------


def _names(cards: Iterable[int]) -> list[str]:
    return [str(DECK[c]) for c in cards]


_OPTION_NAMES: Final = ("flip", "caller_bonus", "target", "kings", "pile", "work", "handicaps")
_NO_HANDICAP: Final = Handicap()


def _normal_handicaps(options: Options) -> tuple[tuple[str, Handicap], ...]:
    """The handicaps sorted by team name, default ones dropped; ``ValueError`` for a bad one."""
    pairs: object = options.handicaps
    if not isinstance(pairs, tuple):
        raise ValueError("option 'handicaps' must be (team, handicap) pairs")
    seen: dict[str, Handicap] = {}
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Handicap)):
            raise ValueError("option 'handicaps' must be (team, handicap) pairs")
        name, handicap = pair
        check_team_name(name)
        if name in seen:
            raise ValueError(f"option 'handicaps' names team {name!r} twice")
        seen[name] = handicap
        pile = options.pile if handicap.pile is None else handicap.pile
        work = options.work if handicap.work is None else handicap.work
        if pile > 52 - work:
            raise ValueError(
                f"handicap of team {name!r}: a nerts pile of {pile} and {work} work piles "
                "need more than 52 cards"
            )
    return tuple((name, seen[name]) for name in sorted(seen) if not seen[name].is_default)


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
