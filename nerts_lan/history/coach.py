"""The coach: the few moments of a round that cost a seat the most, found in the round's log.

Pure and deterministic: it reads a ``LoggedRound`` (``matchlog.rounds``: every action in log order
with the state before it and when it was seen stable), asks the engine what was legal and the
bots' move finder (``bots.suggest_card_move``) what was worth doing, and names, for one player:

- a nerts card a foundation could take for ``IDLE_NERTS_MS`` or more that was not played
  (the costliest: the nerts pile decides the round);
- a foundation race lost (another team played the same card first), closest first;
- a buried card: a card moved onto a work pile's top card that a foundation could take, when
  playing it there first led further (``bots.lookahead``: the check the hint makes too, so the
  coach never blames a move the hint would have suggested);
- a stuck declared late: the team went through its whole stock twice without a card to play
  before declaring stuck, ``STUCK_LATE_MS`` or more after it could have.

Each ``Moment`` names where it happened (the action's index in the round, and the replay's step:
how many counted actions come before it), the move that was missed (for the replay window to
outline) and one sentence for the player. Times come from the log's wall time; a log without it
counts table moves instead (``ACTION_MS`` each).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from nerts_lan.bots.bot import redact, suggest_card_move
from nerts_lan.bots.lookahead import better_foundation_play
from nerts_lan.history.facts import races_of
from nerts_lan.matchlog.rounds import LoggedRound, fold_logged_rounds
from nerts_lan.rules.actions import Action, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.cards import DECK, RANK_NAMES, Card
from nerts_lan.rules.engine import apply
from nerts_lan.rules.piles import ANY_FOUNDATION, NERTS
from nerts_lan.rules.state import Rejection, State

__all__ = [
    "IDLE_NERTS_MS",
    "MAX_MOMENTS",
    "STUCK_LATE_MS",
    "Moment",
    "MomentKind",
    "coach_records",
    "coach_round",
    "moment_record",
]

IDLE_NERTS_MS: Final = 3000
STUCK_LATE_MS: Final = 5000
ACTION_MS: Final = 250
"""What one table move counts for in a log without wall time."""
MAX_MOMENTS: Final = 3
_SUITS: Final = "♠♥♦♣"

MomentKind = Literal["idle_nerts", "race_lost", "buried", "stuck_late"]


@dataclass(frozen=True, slots=True)
class Moment:
    """One costly moment of ``player``'s round.

    ``index``: the action of the round it starts at (``LoggedRound.actions``); ``step``: the
    replay's step there (counted actions before it); ``offset_ms``: since the round's deal;
    ``missed``: the move to outline (None when there is none to show); ``cost``: what ranks it
    (seconds lost, roughly); ``text``: one sentence for the player."""

    kind: MomentKind
    player: str
    round: int
    index: int
    step: int
    offset_ms: int
    missed: Action | None
    cost: float
    text: str


def coach_round(played: LoggedRound, player: str, limit: int = MAX_MOMENTS) -> list[Moment]:
    """The ``limit`` moments that cost ``player`` the most in the round, costliest first (ties in
    round order). Empty for a player not at the table or a round the log holds only part of."""
    team = played.table.team_of(player)
    if team is None or not played.whole:
        return []
    clock = _Clock(played)
    moments = [
        *_idle_nerts(played, player, team, clock),
        *_races_lost(played, player, clock),
        *_buried(played, player, clock),
        *_stuck_late(played, player, team, clock),
    ]
    moments.sort(key=lambda moment: (-moment.cost, moment.index))
    return moments[:limit]


def moment_record(moment: Moment) -> dict[str, object]:
    """A moment as JSON for ``nerts-lan replay --headless --coach``."""
    return {
        "kind": moment.kind,
        "at": round(moment.offset_ms / 1000, 1),
        "action": moment.step,
        "move": moment.missed.to_wire() if moment.missed is not None else None,
        "text": moment.text,
    }


def coach_records(records: Iterable[list[Any]]) -> list[dict[str, object]]:
    """``nerts-lan replay FILE --headless --coach``: for every round the log holds whole, one
    JSON record per player in seat order, with that player's moments."""
    lines: list[dict[str, object]] = []
    for played in fold_logged_rounds(records):
        if not played.whole:
            continue
        for player, _ in played.players():
            moments = [moment_record(moment) for moment in coach_round(played, player)]
            lines.append(
                {"event": "coach", "round": played.number, "player": player, "moments": moments}
            )
    return lines


# --- the four kinds ------------------------------------------------------------------------------


def _idle_nerts(played: LoggedRound, player: str, team: int, clock: _Clock) -> list[Moment]:
    """Spans during which the team's nerts top card could go to a foundation and stayed."""
    moments: list[Moment] = []
    since: int | None = None
    card: int | None = None
    states = [logged.before for logged in played.actions]
    states += [played.actions[-1].after] if played.actions else []
    for index, state in enumerate(states):
        top = _nerts_top(state, team)
        playable = top is not None and _takes(state, player, top)
        if since is not None and (not playable or top != card):
            moments += _idle_span(played, player, card, since, index, clock, ended=False)
            since = None
        if playable and since is None:
            since, card = index, top
    if since is not None:
        moments += _idle_span(played, player, card, since, len(states) - 1, clock, ended=True)
    return moments


def _idle_span(
    played: LoggedRound,
    player: str,
    card: int | None,
    since: int,
    until: int,
    clock: _Clock,
    ended: bool,
) -> list[Moment]:
    waited = clock.began(until) - clock.began(since)
    if card is None or waited < IDLE_NERTS_MS:
        return []
    missed = Play(player, _card(card), NERTS, ANY_FOUNDATION)
    if ended:
        how = "until the round ended"
    else:
        last = played.actions[until - 1].action
        played_it = isinstance(last, Play) and last.source == NERTS and last.card == card
        how = "before it was played" if played_it else "until it could not any more"
    text = (
        f"{_name(card)} from your nerts pile could go to a foundation for "
        f"{clock.span(since, until)} {how}"
    )
    cost = waited / 1000 + 2
    return [_moment("idle_nerts", played, player, since, clock, missed, cost, text, began=True)]


def _races_lost(played: LoggedRound, player: str, clock: _Clock) -> list[Moment]:
    moments: list[Moment] = []
    index_of = {id(logged): index for index, logged in enumerate(played.actions)}
    for race in races_of(played):
        if race.loser != player:
            continue
        assert isinstance(race.lost.action, Play)
        card = race.lost.action.card
        index = index_of[id(race.won)]
        if race.margin_ms is None or race.margin_ms <= 0:
            by = "at the same moment"
        else:
            by = f"by {race.margin_ms} ms"
        text = f"{race.winner} put {_name(card)} on a foundation first: you lost that race {by}"
        cost = 1.5 - min(race.margin_ms or 0, 1000) / 1000  # the closer, the sorer
        moments.append(
            _moment("race_lost", played, player, index, clock, race.lost.action, cost, text)
        )
    return moments


def _buried(played: LoggedRound, player: str, clock: _Clock) -> list[Moment]:
    """Cards this player covered on a work pile while a foundation could take them."""
    moments: list[Moment] = []
    team = played.table.team_of(player)
    assert team is not None
    for index, logged in enumerate(played.actions):
        action = logged.action
        if logged.refused is not None or action.by != player:
            continue
        if not isinstance(action, (Play, SlideUnder)) or action.target.kind != "work":
            continue
        if isinstance(action, SlideUnder):
            continue  # sliding under covers nothing
        assert action.target.index is not None
        pile = logged.before.teams[team].work[action.target.index]
        if not pile:
            continue
        covered = pile[-1]
        free = Play(player, _card(covered), action.target, ANY_FOUNDATION)
        if isinstance(apply(logged.before, free), Rejection):
            continue
        if better_foundation_play(redact(logged.before, team), player, action) is None:
            continue  # covering it led as far: no mistake (and what the hint may say)
        better = suggest_card_move(logged.before, player) or free
        text = (
            f"you covered {_name(covered)} on work pile {action.target.index + 1} "
            "while a foundation could take it"
        )
        moments.append(_moment("buried", played, player, index, clock, better, 1.0, text))
    return moments


def _stuck_late(played: LoggedRound, player: str, team: int, clock: _Clock) -> list[Moment]:
    """A stuck declared after two fruitless passes through the stock, long after the first."""
    moments: list[Moment] = []
    members = set(played.table.team_players[team])
    flips: list[int] = []
    for index, logged in enumerate(played.actions):
        action = logged.action
        if logged.refused is not None or action.by not in members:
            continue
        if isinstance(action, (Play, SlideUnder)):
            flips = []
        elif isinstance(action, Flip):
            flips.append(index)
        elif isinstance(action, DeclareStuck):
            moments += _late(played, player, team, flips, index, clock)
            flips = []
    return moments


def _late(
    played: LoggedRound, player: str, team: int, flips: list[int], index: int, clock: _Clock
) -> list[Moment]:
    if not flips:
        return []
    tableau = played.actions[flips[0]].before.teams[team]
    cards = len(tableau.stock) + len(tableau.waste)
    one_pass = math.ceil(cards / played.table.options.flip) + 1  # the turn-over counts
    if len(flips) < 2 * one_pass:
        return []
    could = flips[one_pass - 1] + 1  # after the first whole pass that played nothing
    waited = clock.at(index) - clock.began(could)
    if waited < STUCK_LATE_MS:
        return []
    text = (
        f"a whole pass through your stock found nothing, and you declared stuck "
        f"{clock.span(could, index + 1)} later"
    )
    missed = DeclareStuck(player)
    cost = waited / 1000
    return [_moment("stuck_late", played, player, could, clock, missed, cost, text, began=True)]


# --- helpers -------------------------------------------------------------------------------------


class _Clock:
    """When each action of the round was seen (ms since the deal; by count without wall time)."""

    def __init__(self, played: LoggedRound) -> None:
        self._timed = played.started_at is not None and all(
            logged.at is not None for logged in played.actions
        )
        self._start = played.started_at or 0
        self._times = [logged.at or 0 for logged in played.actions]
        self._end = played.ended_at if played.ended_at is not None else None
        self._count = len(played.actions)

    def at(self, index: int) -> int:
        """Ms since the deal at which action ``index`` was seen (the round's end past the last)."""
        if not self._timed:
            return index * ACTION_MS
        if index >= self._count:
            end = self._end if self._end is not None else self._times[-1] if self._times else 0
            return end - self._start
        return self._times[index] - self._start

    def began(self, index: int) -> int:
        """Ms since the deal at which the state before action ``index`` began: when the action
        before it was seen (the deal for the first)."""
        return self.at(index - 1) if index > 0 else 0

    def span(self, since: int, until: int) -> str:
        """How long from the state before action ``since`` to the one before ``until``."""
        if not self._timed:
            return f"{until - since} table moves"
        seconds = (self.began(until) - self.began(since)) / 1000
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


def _moment(
    kind: MomentKind,
    played: LoggedRound,
    player: str,
    index: int,
    clock: _Clock,
    missed: Action | None,
    cost: float,
    text: str,
    began: bool = False,
) -> Moment:
    """A moment at action ``index`` (``began``: at the state before it, since it began)."""
    step = sum(1 for logged in played.actions[:index] if logged.refused is None)
    offset = clock.began(index) if began else clock.at(index)
    return Moment(kind, player, played.number, index, step, offset, missed, cost, text)


def _nerts_top(state: State, team: int) -> int | None:
    nerts = state.teams[team].nerts
    return nerts[-1] if nerts else None


def _takes(state: State, player: str, card: int) -> bool:
    """A foundation takes the nerts card now (and the round is on)."""
    if state.over:
        return False
    return not isinstance(apply(state, Play(player, _card(card), NERTS, ANY_FOUNDATION)), Rejection)


def _card(value: int) -> Card:
    return DECK[value]


def _name(card: int) -> str:
    """A card as players write it: "4♣", "10♥"."""
    return f"{RANK_NAMES[card % 13]}{_SUITS[card // 13]}"
