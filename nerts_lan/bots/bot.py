"""Bots that play one seat of a team like people do, from what that team can see.

A host (the simulator, a network replica, the window) gives a seat to ``Bot(player, level, seed)``
and loops: ``action = bot.decide(state, now)`` on its current state, waits
``bot.reaction_delay(action)`` seconds (simulated or real), then submits the action to the ordered
log. By then someone else may have taken the spot: the engine rejects the stale action and the bot
simply decides again on the next state. ``decide`` returns None when there is nothing to do but
wait (the round is over; the team stands stuck and has looked through its stock since the
foundations last changed; a partner seat leaves the stock to the team's first seat): ask again
after ``reaction_delay(None)`` or when the state changes.

Fair by construction: ``decide`` first ``redact``s the state to what the bot's team sees (face-down
cards become ``HIDDEN_CARD``, only pile sizes stay true) and never looks at the full state again.

Pure: no sockets, no clock of its own (a host may pass its time in), no sleeping, no global
``random`` (each bot owns seeded generators), so the same seed and the same sequence of states
give the same actions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, TypeAlias

from nerts_lan.bots.lookahead import better_foundation_play
from nerts_lan.bots.values import FLIP_VALUE, HIDDEN_CARD, MoveValuer, WorkLayout
from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.cards import card_rank
from nerts_lan.rules.engine import legal_actions
from nerts_lan.rules.piles import Pile
from nerts_lan.rules.state import State, Tableau

__all__ = [
    "HIDDEN_CARD",
    "LEVELS",
    "PROFILES",
    "Bot",
    "LevelProfile",
    "redact",
    "suggest_card_move",
]


@dataclass(frozen=True, slots=True)
class LevelProfile:
    """How well and how fast a level plays."""

    name: str
    delay: float
    """Mean reaction time per action, in seconds (0: instant)."""
    miss: float
    """Chance to overlook each possible card move at a decision (flipping is never overlooked)."""
    noise: float
    """Spread of the random error added to each move's value: misjudged priorities."""
    race: bool
    """Plays first the foundation cards that another team could also play there."""
    careful: bool
    """Avoids burying cards the foundations will soon want under long work-pile sequences."""
    play_on: int
    """Foundation cards it plays, once its nerts pile is empty, before it calls Nerts."""


PROFILES: Final[dict[str, LevelProfile]] = {
    "easy": LevelProfile(
        "easy", delay=1.2, miss=0.35, noise=150.0, race=False, careful=False, play_on=0
    ),
    "medium": LevelProfile(
        "medium", delay=0.7, miss=0.12, noise=60.0, race=True, careful=True, play_on=2
    ),
    "hard": LevelProfile(
        "hard", delay=0.35, miss=0.0, noise=4.0, race=True, careful=True, play_on=5
    ),
    "instant": LevelProfile(
        "instant", delay=0.0, miss=0.0, noise=4.0, race=True, careful=True, play_on=5
    ),
}
"""The levels by name; ``instant`` plays like ``hard`` with no reaction delay."""

LEVELS: Final = tuple(PROFILES)


def redact(state: State, team: int) -> State:
    """``state`` as the players of ``team`` see it: every face-down or covered card is
    ``HIDDEN_CARD`` (all stocks, nerts piles below their top, wastes below their top); work piles,
    pile sizes, stuck flags and the foundations are as they are."""
    teams = []
    for tableau in state.teams:
        teams.append(
            Tableau(
                nerts=_hide_below_top(tableau.nerts),
                work=tableau.work,
                stock=_HIDDEN_RUNS[len(tableau.stock)],
                waste=_hide_below_top(tableau.waste),
                stuck=tableau.stuck,
            )
        )
    return state.with_teams(tuple(teams))


def suggest_card_move(
    state: State, player: str, seen_layouts: Iterable[WorkLayout] = ()
) -> Action | None:
    """The card move (a play or a slide under) most worth making now by ``player``, or None when
    none is worth more than flipping the stock: what the ``hard`` level values, with no misses,
    no noise and no split between partners (any seat may play from the waste). For hints.

    Decided on the view of ``player``'s team only (``redact``); ``seen_layouts`` are work layouts
    (piles sorted) that a work-to-work move must not go back to (the current one never is)."""
    team = state.table.team_of(player)
    if team is None or state.outcome is not None:
        return None
    view = redact(state, team)
    layouts = set(seen_layouts)
    layouts.add(tuple(sorted(view.teams[team].work)))
    valuer = MoveValuer(
        view,
        team,
        race=True,
        careful=True,
        with_waste=True,
        seen_layouts=layouts,
        may_shuffle=True,
    )
    best: Action | None = None
    best_value = FLIP_VALUE
    for action in legal_actions(view, player):
        valued = valuer.value(action)
        if valued is not None and valued[0] > best_value:
            best, best_value = action, valued[0]
    if best is not None:
        # Checked by a short search: never a worse move than a foundation play (see lookahead).
        best = better_foundation_play(view, player, best) or best
    return best


class Bot:
    """One seat played by the computer at a level: ``easy``, ``medium``, ``hard`` or ``instant``.

    ``seed`` (an int or a str) makes its choices and its delays reproducible; ``delay_scale``
    multiplies its reaction delays (0 makes any level instant, for tests and simulations).
    """

    def __init__(
        self, player: str, level: str = "medium", seed: int | str = 0, *, delay_scale: float = 1.0
    ) -> None:
        profile = PROFILES.get(level)
        if profile is None:
            raise ValueError(f"unknown bot level {level!r} (expected one of {', '.join(LEVELS)})")
        if not (
            isinstance(delay_scale, (int, float))
            and math.isfinite(delay_scale)
            and delay_scale >= 0
        ):
            raise ValueError("the delay scale must be a finite number of at least 0")
        self.player: Final = player
        self.level: Final = level
        self.profile: Final = profile
        self.delay_scale: Final = float(delay_scale)
        # Separate streams: how often a host asks for delays never changes the choices.
        self._choice_rng = random.Random(f"choice:{seed}:{player}")
        self._delay_rng = random.Random(f"delay:{seed}:{player}")
        self._memory = _Memory()

    def __repr__(self) -> str:
        return f"Bot({self.player!r}, {self.level!r})"

    def reset(self) -> None:
        """Forget the current round (a new round is also noticed by itself)."""
        self._memory = _Memory()

    def reaction_delay(self, action: Action | None = None) -> float:
        """Seconds to wait before submitting ``action``: the level's mean with a natural spread
        (log-normal, clipped), shorter for a flip, which is a reflex. 0 for ``instant``."""
        mean = self.profile.delay * self.delay_scale
        if mean <= 0:
            return 0.0
        if type(action) is Flip:
            mean *= _FLIP_SPEEDUP
        spread = self._delay_rng.lognormvariate(-(_DELAY_SIGMA**2) / 2, _DELAY_SIGMA)
        return mean * min(max(spread, _DELAY_MIN), _DELAY_MAX)

    def decide(self, state: State, now: float | None = None) -> Action | None:
        """The action this seat takes next on ``state``, or None: nothing to do for now, ask
        again after ``reaction_delay()`` or when the state changes.

        ``now`` is the host's clock in seconds (real or simulated), if it has one: a partner
        seat uses it to notice that the team's stock keeper has stopped playing.
        """
        team = state.table.team_of(self.player)
        if team is None or state.outcome is not None:
            return None
        return self._decide(redact(state, team), team, now)

    # --- the decision, on the redacted view only ---------------------------------------------

    def _decide(self, view: State, team: int, now: float | None) -> Action | None:
        own = view.teams[team]
        memory = self._memory
        memory.observe(view, own)
        actions = legal_actions(view, self.player)
        if not own.nerts:
            call = self._nerts_call(view, team, own, actions)
            if call is not None:
                return call
        seat = view.table.team_players[team].index(self.player)
        # The first seat of a team keeps the stock (flips and plays from the waste); a partner
        # works the nerts and work piles, so that two flippers do not skip each other's cards.
        # It takes the stock over when the team's tableau has not changed for a while.
        choice = self._best_card_move(view, team, actions, seat, with_waste=seat == 0)
        if choice is None and seat:
            if self._partner_active(own, now):
                return None
            choice = self._best_card_move(view, team, actions, seat, with_waste=True)
        if choice is not None:
            move, after = choice
            if after is not None:
                memory.work_configs.add(after)
            return move
        return self._flip_or_stuck(view, own)

    def _partner_active(self, own: Tableau, now: float | None) -> bool:
        """True while the team's tableau has changed lately (a partner works the stock): not for
        longer than the level's patience in host time, or a few idle decisions without one."""
        memory = self._memory
        key = (len(own.nerts), own.work, len(own.stock), len(own.waste))
        if key != memory.idle_key:
            memory.idle_key = key
            memory.idle_since = now
            memory.idle_count = 0
        memory.idle_count += 1
        if now is not None and memory.idle_since is not None:
            patience = max(_PATIENCE_DELAYS * self.profile.delay * self.delay_scale, _MIN_PATIENCE)
            return now - memory.idle_since < patience
        return memory.idle_count <= _PATIENCE_DECISIONS

    def _nerts_call(
        self, view: State, team: int, own: Tableau, actions: list[Action]
    ) -> Action | None:
        """Call Nerts, or None to play on first while that safely adds to the team's score."""
        memory = self._memory
        rivals = [t for i, t in enumerate(view.teams) if i != team]
        if rivals:
            limit = self.profile.play_on
            # A rival near its own call may end the round (and take any caller bonus) first.
            danger = 4 if view.table.options.caller_bonus else 2
            if memory.played_on >= limit or min(len(t.nerts) for t in rivals) <= danger:
                return CallNerts(self.player)
        else:
            limit = _SOLO_PLAY_ON
        best: Action | None = None
        best_rank = 99
        for action in actions:
            if type(action) is Play and action.target.kind == "foundation":
                rank = card_rank(action.card)
                if rank < best_rank:
                    best, best_rank = action, rank
        if best is None or memory.played_on >= limit:
            return CallNerts(self.player)
        memory.played_on += 1
        return best

    def _best_card_move(
        self,
        view: State,
        team: int,
        actions: list[Action],
        seat: int,
        with_waste: bool,
    ) -> tuple[Action, WorkLayout | None] | None:
        """The most valuable card move worth making now, with the work layout it leads to (for
        work-to-work moves, which must not go back to a layout seen since the last progress)."""
        memory = self._memory
        valuer = MoveValuer(
            view,
            team,
            race=self.profile.race,
            careful=self.profile.careful,
            with_waste=with_waste,
            seen_layouts=memory.work_configs,
            may_shuffle=memory.work_moves < _MAX_WORK_MOVES,
        )
        rng = self._choice_rng
        miss = self.profile.miss
        noise = self.profile.noise
        scored: list[_Scored] = []
        for order, action in enumerate(actions):
            valued = valuer.value(action)
            if valued is None:
                continue
            value, after = valued
            if value <= FLIP_VALUE:
                continue
            if miss and rng.random() < miss:
                continue
            if noise:
                value += rng.uniform(-noise, noise)
            scored.append((value, order, action, after))
        if not scored:
            return None
        return self._pick(scored, seat, with_waste)

    def _pick(
        self, scored: list[_Scored], seat: int, with_waste: bool
    ) -> tuple[Action, WorkLayout | None] | None:
        """The best of the ``scored`` moves for this seat (None: leave it to the stock keeper)."""
        scored.sort(key=lambda item: (-item[0], item[1]))
        pick = scored[0]
        if seat:
            # Partners split the work: a later seat takes another pile's move when there is one,
            # so that two bots of one team do not race each other for the same card.
            others = [
                s
                for s in scored
                if s[0] >= _SPLIT_VALUE and _source_of(s[2]) != _source_of(pick[2])
            ]
            if others:
                pick = others[(seat - 1) % len(others)]
            elif not with_waste:
                return None  # the stock keeper will make that move
        if pick[3] is not None:
            self._memory.work_moves += 1
        return pick[2], pick[3]

    def _flip_or_stuck(self, view: State, own: Tableau) -> Action | None:
        """Nothing worth playing: turn the stock, or declare stuck after a fruitless full pass."""
        memory = self._memory
        total = sum(len(cards) for cards in view.f_cards)
        if not own.stock and not own.waste:
            if own.stuck:
                return None
            memory.foundations_seen = total
            memory.stuck_looking = False
            return DeclareStuck(self.player)
        position = (len(own.stock), len(own.waste))
        if own.stuck:
            # Look through the stock once more after each change of the foundations (a rival
            # may have made a card of ours playable), else wait for the others.
            if total != memory.foundations_seen:
                memory.foundations_seen = total
                memory.stuck_flips.clear()
                memory.stuck_looking = True
            if not memory.stuck_looking or position in memory.stuck_flips:
                memory.stuck_looking = False
                return None
            memory.stuck_flips.add(position)
            return Flip(self.player)
        if position in memory.flipped_from:
            memory.flipped_from.clear()
            memory.foundations_seen = total
            memory.stuck_flips.clear()
            memory.stuck_looking = False
            return DeclareStuck(self.player)
        memory.flipped_from.add(position)
        return Flip(self.player)


# --- private helpers ------------------------------------------------------------------------

_SPLIT_VALUE: Final = 300.0
_SOLO_PLAY_ON: Final = 52
_MAX_WORK_MOVES: Final = 40
_FLIP_SPEEDUP: Final = 0.7
_PATIENCE_DELAYS: Final = 4.0
_MIN_PATIENCE: Final = 0.5
_PATIENCE_DECISIONS: Final = 4
_DELAY_SIGMA: Final = 0.35
_DELAY_MIN: Final = 0.4
_DELAY_MAX: Final = 3.0
_HIDDEN_RUNS: Final = tuple((HIDDEN_CARD,) * n for n in range(53))


_Scored: TypeAlias = tuple[float, int, Action, "WorkLayout | None"]
"""A candidate move: (value, order in the legal actions, the action, the layout it leads to)."""


class _Memory:
    """What a bot remembers of the round it is playing: its own observations only."""

    __slots__ = (
        "cards",
        "flipped_from",
        "foundations_seen",
        "idle_count",
        "idle_key",
        "idle_since",
        "nerts",
        "played_on",
        "progress",
        "rotations",
        "stuck_flips",
        "stuck_looking",
        "table",
        "work_configs",
        "work_moves",
    )

    def __init__(self) -> None:
        self.table: object = None
        self.clear()

    def clear(self) -> None:
        """Forget everything but the table."""
        self.cards = -1
        self.nerts = -1
        self.progress: tuple[int, int, int] = (-1, -1, -1)
        self.rotations = -1
        self.flipped_from: set[tuple[int, int]] = set()
        """Stock positions (stock size, waste size) it flipped from since the team last
        progressed: flipping from one again means a full fruitless pass."""
        self.work_configs: set[tuple[tuple[int, ...], ...]] = set()
        """Work layouts (piles sorted) seen since the last progress: never shuttle back."""
        self.work_moves = 0
        self.played_on = 0
        self.foundations_seen = -1
        """Cards on the foundations when it last declared stuck or looked through the stock."""
        self.stuck_flips: set[tuple[int, int]] = set()
        self.stuck_looking = False
        self.idle_key: object = None
        """The team's tableau (pile sizes, work piles) when a partner last had nothing to do."""
        self.idle_since: float | None = None
        self.idle_count = 0

    def observe(self, view: State, own: Tableau) -> None:
        work_cards = sum(len(pile) for pile in own.work)
        cards = len(own.nerts) + work_cards + len(own.stock) + len(own.waste)
        if view.table is not self.table or cards > self.cards or len(own.nerts) > self.nerts:
            self.clear()  # a new round
            self.table = view.table
        self.cards = cards
        self.nerts = len(own.nerts)
        progress = (len(own.nerts), len(own.stock) + len(own.waste), work_cards)
        if progress != self.progress:
            self.progress = progress
            self.flipped_from.clear()
            self.work_configs.clear()
            self.work_moves = 0
        if view.rotations != self.rotations:
            self.rotations = view.rotations
            self.flipped_from.clear()
        self.work_configs.add(tuple(sorted(own.work)))


def _hide_below_top(pile: tuple[int, ...]) -> tuple[int, ...]:
    if len(pile) <= 1:
        return pile
    return _HIDDEN_RUNS[len(pile) - 1] + pile[-1:]


def _source_of(action: Action) -> Pile | None:
    return action.source if type(action) is Play or type(action) is SlideUnder else None
