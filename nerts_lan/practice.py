"""Practice mode: this machine alone, the local player against bots, no network.

``PracticeSession`` implements the ``Session`` protocol with a ``Replica`` whose every entry is
stable at once (there is no one to disagree with). The bots sit in every other seat (and in the
local player's team as partners in partnership mode); each decides on the view, waits its
reaction delay and submits, exactly as a bot on the network would, so a bot's stale move is
rejected by the engine like anyone's. Time is passed in: ``poll(now)`` plays every bot action due
by ``now``; nothing here sleeps, draws or reads a clock.

Rounds follow each other into a match: when a round ends the session reports ``RoundEnded`` (and
``MatchEnded`` once a team has won) and waits for ``next_round()`` (a button in the window), or
starts the next round by itself after ``intermission`` seconds when that is set.

No one else waits at a practice table, so its game can stop: between ``pause(now)`` and
``resume(now)`` (the player reads the help, the options, a question) no bot moves and no time
passes for the game; every bot's next move comes as late after the pause as it was due before.
"""

from __future__ import annotations

import heapq
import inspect
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Final

from nerts_lan.bots.bot import LEVELS, Bot
from nerts_lan.matchlog.rounds import LoggedRound, RoundRecorder
from nerts_lan.rules.actions import Action, Play, SlideUnder
from nerts_lan.rules.engine import deal_round
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import Options, RejectionKind, State, Table
from nerts_lan.table.replica import ActionApplied, ActionRejected, EntryKey, Replica, RoundEnded
from nerts_lan.table.session import MatchEnded, RoundStarted, SessionEvent

__all__ = ["BOT_NAMES", "MAX_OPPONENTS", "PracticeConfig", "PracticeSession"]

MAX_OPPONENTS: Final = 7
"""A table has at most 8 teams: the player's and 7 others."""

BOT_NAMES: Final = (
    "Ada",
    "Bo",
    "Cyd",
    "Dot",
    "Eli",
    "Fay",
    "Gus",
    "Hal",
    "Ivy",
    "Jo",
    "Kit",
    "Lu",
    "Max",
    "Nia",
    "Oz",
    "Pip",
)
"""Names given to the bots, in seat order."""

RACE_MEMORY: Final = 2.0
"""Seconds during which another player's move counts as having won a race against ours."""

BOT_RETRY: Final = 0.5
"""Seconds after which a bot that had nothing to do is asked again (its partner may be idle)."""


@dataclass(frozen=True)
class PracticeConfig:
    """What practice table to play: the player, how many bot teams, how well they play."""

    player: str = "You"
    opponents: int = 3
    """Bot teams at the table, 0 (a solo time trial) to 7."""
    level: str = "medium"
    partners: bool = False
    """Partnership mode: two players per team; the local player's partner is a bot."""
    options: Options = field(default_factory=Options)
    seed: str | None = None
    """Seed of the deals and the bots (None: a fresh random one)."""
    delay_scale: float = 1.0
    """Multiplies the bots' reaction delays (0: instant bots)."""
    intermission: float | None = None
    """Seconds between a round's end and the next deal; None waits for ``next_round()``."""

    def __post_init__(self) -> None:
        if not isinstance(self.player, str) or not 1 <= len(self.player.strip()) <= 24:
            raise ValueError("the player name must be 1 to 24 characters")
        if not isinstance(self.opponents, int) or not 0 <= self.opponents <= MAX_OPPONENTS:
            raise ValueError(f"opponents must be from 0 to {MAX_OPPONENTS}")
        if self.level not in LEVELS:
            raise ValueError(f"unknown bot level {self.level!r} (expected {', '.join(LEVELS)})")
        if not self.delay_scale >= 0:
            raise ValueError("the bot delay scale must be at least 0")

    def table(self) -> Table:
        """The practice table: the player's team first, then the bot teams."""
        player = self.player.strip()
        names = iter(name for name in BOT_NAMES if name.lower() != player.lower())
        seats = 2 if self.partners else 1
        players: list[tuple[str, ...]] = [(player, *(next(names) for _ in range(seats - 1)))]
        for _ in range(self.opponents):
            players.append(tuple(next(names) for _ in range(seats)))
        if self.partners:
            team_names = tuple(" & ".join(team) for team in players)
        else:
            team_names = tuple(team[0] for team in players)
        return Table(self.options, team_names, tuple(players))


class PracticeSession:
    """The local player and bots at one table on this machine (implements ``Session``)."""

    def __init__(
        self,
        config: PracticeConfig,
        *,
        first_deal: State | None = None,
        record: Callable[[list[LoggedRound], float], None] | None = None,
    ) -> None:
        """``first_deal`` replaces the first round's deal (tests, replays); it must be of the
        config's table. ``record(rounds, now)`` is given the match's finished rounds at each
        round's end (the match history)."""
        self.config = config
        self._table = config.table()
        if first_deal is not None and first_deal.table != self._table:
            raise ValueError("the first deal is not of this practice table")
        self._first_deal = first_deal
        self._seed = config.seed if config.seed is not None else os.urandom(8).hex()
        self._player = self._table.team_players[0][0]
        self._bots = [
            player for team in self._table.team_players for player in team if player != self._player
        ]
        self._match = Match(self._table.team_names, config.options.target)
        self._replica = Replica(self._first_state(), self._player)
        self._round = 0
        self._round_over = True
        self._intermission_until: float | None = None
        self._outbox: list[SessionEvent] = []
        self._now = 0.0
        """The game's time: the time polled, less every pause."""
        self._paused_at: float | None = None
        self._paused_for = 0.0
        self._counter = 0
        self._bot_objects: dict[str, Bot] = {}
        self._due: list[tuple[float, int, str, Action | None]] = []
        self._recent: deque[tuple[float, str, Action]] = deque()
        self._closed = False
        self._recorder = RoundRecorder("Practice", self._player)
        self._record = record

    # --- the Session protocol ----------------------------------------------------------------

    @property
    def local_players(self) -> tuple[str, ...]:
        return (self._player,)

    @property
    def table(self) -> Table:
        return self._table

    @property
    def view(self) -> State:
        return self._replica.view

    @property
    def match(self) -> Match:
        return self._match

    @property
    def round_number(self) -> int:
        """The current (or last finished) round's number, from 1; 0 before the first deal."""
        return self._round

    @property
    def waiting_for_next_round(self) -> bool:
        """True between a round's end and the next deal."""
        return self._round_over and self._round > 0

    def submit(self, action: Action) -> None:
        """Apply the local player's intent now; its result comes with the next ``poll``."""
        if action.by != self._player:
            raise ValueError(f"{action.by} is not played on this machine")
        if self._closed or self._round_over:
            key = (self._counter, self._player)
            self._outbox.append(
                ActionRejected(key, action, "the round is over", True, RejectionKind.ROUND_OVER)
            )
            return
        self._add(self._player, action, self._now)

    def send_cursor(self, player: str, x: float, y: float, holding: tuple[str, ...]) -> None:
        """No one else is watching in practice: the pointer stays on this machine."""

    def poll(self, now: float) -> list[SessionEvent]:
        if self._paused_at is not None:
            events, self._outbox = self._outbox, []
            return events
        self._now = max(self._now, now - self._paused_for)
        if not self._closed:
            if self._round == 0:
                self._start_round(self._now)
            elif self._round_over:
                until = self._intermission_until
                if until is not None and self._now >= until:
                    self.next_round()
            while self._due and self._due[0][0] <= self._now and not self._round_over:
                due, _, player, action = heapq.heappop(self._due)
                if action is None:
                    self._schedule(player, due)
                else:
                    self._add(player, action, due)
                    if not self._round_over:
                        self._schedule(player, due)
        events, self._outbox = self._outbox, []
        return events

    def close(self) -> None:
        self._closed = True
        self._due.clear()

    def logged_round(self) -> LoggedRound | None:
        """The current (or last) round as the coach reads it: every action with its time."""
        return self._recorder.round()

    # --- pausing (implements ``PausableSession``) ---------------------------------------------

    @property
    def paused(self) -> bool:
        """True between ``pause`` and ``resume``."""
        return self._paused_at is not None

    def pause(self, now: float) -> None:
        """Stop the game at time ``now``: until ``resume`` no bot moves (no-op when paused)."""
        if self._paused_at is None:
            self._paused_at = now

    def resume(self, now: float) -> None:
        """Let the game go on from where ``pause`` stopped it (no-op when not paused)."""
        if self._paused_at is not None:
            self._paused_for += max(now - self._paused_at, 0.0)
            self._paused_at = None

    # --- between rounds ----------------------------------------------------------------------

    def next_round(self) -> None:
        """Deal the next round now (after ``MatchEnded``: the first round of a new match)."""
        if not self._round_over or self._closed:
            return
        if self._match.over:
            self._match = Match(self._table.team_names, self.config.options.target)
            self._recorder.new_match()
        self._start_round(self._now)

    # --- helpers -----------------------------------------------------------------------------

    def _first_state(self) -> State:
        if self._first_deal is not None:
            return self._first_deal
        return deal_round(self._table, f"{self._seed}/r1")

    def _start_round(self, now: float) -> None:
        self._round += 1
        if self._round == 1:
            state = self._first_state()
        else:
            state = deal_round(self._table, f"{self._seed}/r{self._round}")
        self._replica = Replica(state, self._player)
        self._round_over = False
        self._intermission_until = None
        self._recent.clear()
        self._due.clear()
        self._bot_objects = {
            name: Bot(
                name,
                self.config.level,
                f"{self._seed}/r{self._round}/{name}",
                delay_scale=self.config.delay_scale,
            )
            for name in self._bots
        }
        self._outbox.append(RoundStarted(self._round, state))
        self._recorder.start(self._round, state, now)
        for name in self._bots:
            self._schedule(name, now)

    def _schedule(self, player: str, now: float) -> None:
        """Let bot ``player`` decide on the current view and queue its action."""
        bot = self._bot_objects[player]
        view = self._replica.view
        action = bot.decide(view, now) if _DECIDE_TAKES_NOW else bot.decide(view)
        self._counter += 1
        if action is None:
            heapq.heappush(self._due, (now + BOT_RETRY, self._counter, player, None))
        else:
            delay = bot.reaction_delay(action)
            heapq.heappush(self._due, (now + delay, self._counter, player, action))

    def _add(self, player: str, action: Action, now: float) -> None:
        self._counter += 1
        key: EntryKey = (self._counter, player)
        before = self._replica.view
        events = self._replica.add(key, action)
        events.extend(self._replica.stabilize(key))
        for event in events:
            if isinstance(event, ActionApplied):
                self._remember(now, event.action)
                self._outbox.append(event)
                self._wake_waiting_bots(now)
                self._recorder.played(key, action, before, self._replica.view, None, now)
            elif isinstance(event, ActionRejected):
                self._outbox.append(self._with_race_winner(event, now))
                self._recorder.played(key, action, before, before, event.reason, now)
            elif isinstance(event, RoundEnded):
                self._end_round(event, now)

    def _end_round(self, event: RoundEnded, now: float) -> None:
        self._round_over = True
        self._due.clear()
        self._match = self._match.with_round(event.scores)
        self._recorder.ended(event, self._match, self._match.over, now)
        if self._record is not None:
            self._record(self._recorder.match_rounds(), now)
        self._outbox.append(event)
        if self._match.over:
            self._outbox.append(MatchEnded(self._match))
        if self.config.intermission is not None:
            self._intermission_until = now + self.config.intermission

    def _wake_waiting_bots(self, now: float) -> None:
        """Bots that had nothing to do decide again at once after a change."""
        if not any(action is None for _, _, _, action in self._due):
            return
        waiting = [item for item in self._due if item[3] is None]
        self._due = [item for item in self._due if item[3] is not None]
        heapq.heapify(self._due)
        for _, _, player, _ in sorted(waiting, key=lambda item: item[1]):
            self._schedule(player, now)

    def _remember(self, now: float, action: Action) -> None:
        recent = self._recent
        recent.append((now, action.by, action))
        while recent and recent[0][0] < now - RACE_MEMORY:
            recent.popleft()

    def _with_race_winner(self, event: ActionRejected, now: float) -> ActionRejected:
        """A local refusal that another player's recent move explains becomes a lost race."""
        if not event.local or event.kind is RejectionKind.LOST_RACE:
            return event
        winner = self._race_winner(now, event.action)
        if winner is None:
            return event
        return replace(event, kind=RejectionKind.LOST_RACE, lost_race_to=winner)

    def _race_winner(self, now: float, action: Action | None) -> str | None:
        """Who lately took the place of our refused move: played the same card to a
        foundation first, or (a partner) moved our very card away."""
        if not isinstance(action, (Play, SlideUnder)):
            return None
        team = self._table.team_of(self._player)
        for when, by, other in reversed(self._recent):
            if when < now - RACE_MEMORY or by == self._player:
                continue
            if not isinstance(other, (Play, SlideUnder)) or other.card != action.card:
                continue
            to_foundation = other.target.kind == action.target.kind == "foundation"
            if to_foundation or self._table.team_of(by) == team:
                return by
        return None


_DECIDE_TAKES_NOW: Final = "now" in inspect.signature(Bot.decide).parameters
