"""Replaying a match log in the window: a read-only ``Session`` that plays the log back.

The log is folded once, as the table folded it (``matchlog.rounds.fold_log``, the fold the
history and the coach read too), into the match's rounds: each round's deal, every action that
counted (in log order, with the state after it: the round's ``steps``), its end and the match's
scores. ``ReplaySession`` then walks that timeline and reports it through
the ``Session`` protocol, so the table screen draws a replay exactly as it draws a game.

Log entries carry Lamport timestamps, not wall time, so the replay has its own pace: one action
every ``PACE`` seconds at 1×, times the chosen speed. Actions the rules refused (races lost) are
not shown: they changed nothing. Nobody plays in a replay: ``local_players`` is empty and
``submit`` refuses everything. Time is passed in (``poll(now)``); nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from nerts_lan.matchlog.rounds import REPLAY_PEER, LoggedRound, fold_log
from nerts_lan.rules.actions import Action
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import RejectionKind, State, Table
from nerts_lan.table.replica import ActionApplied, ActionRejected
from nerts_lan.table.session import RoundStarted, SessionEvent

__all__ = ["PACE", "SPEEDS", "ReplaySession"]

PACE: Final = 0.25
"""Seconds per action at 1× (the log holds no wall time)."""

SPEEDS: Final = (1, 2, 4, 8)
"""The speeds to choose from, as multiples of the normal pace."""


class ReplaySession:
    """A match log played back as a ``Session``: play, pause, step, skip rounds, change speed."""

    def __init__(
        self,
        rounds: Sequence[LoggedRound],
        *,
        notice: str | None = None,
        viewer_team: int | None = None,
    ) -> None:
        """``notice`` says what is wrong with the log (None if nothing); ``viewer_team`` is the
        team whose seat the table is seen from (the log writer's), None for a neutral seat."""
        if not rounds:
            raise ValueError("the log holds no dealt round to replay (the match never started)")
        self.notice = notice
        self.viewer_team = viewer_team
        self._rounds = list(rounds)
        self._counts = [_action_counts(played) for played in self._rounds]
        self._index = 0
        self._step = 0
        self._over = False
        self._started = False
        self._playing = True
        self._speed = 0
        self._now = 0.0
        self._due = 0.0
        self._outbox: list[SessionEvent] = []
        self.mark: tuple[int, int, Action] | None = None
        """A move to outline where the coach sent the replay: (round index, step, move)."""

    @classmethod
    def from_records(
        cls,
        records: Sequence[list[Any]],
        problem: str | None = None,
        writer: str | None = None,
    ) -> ReplaySession:
        """The replay of a log's records (``problem``: what ``read_match_log`` found wrong after
        them); ``ValueError`` when no round was dealt."""
        folded = fold_log(records)
        rounds = folded.rounds
        problems = folded.problems(problem)
        if not rounds and folded.ignored:  # say why: a table's Create refused, most likely
            raise ValueError(f"the log holds no dealt round to replay: {problems[0]}")
        notice = "; ".join(problems) if problems else None
        viewer_team = None
        if rounds and writer is not None and writer in rounds[0].owners:
            viewer_team = rounds[0].table.team_of(rounds[0].owners[writer])
        return cls(rounds, notice=notice, viewer_team=viewer_team)

    @classmethod
    def at_moment(
        cls, played: LoggedRound, step: int, move: Action | None, viewer_team: int | None
    ) -> ReplaySession:
        """The replay of one round, paused ``step`` counted actions in, with ``move`` (the one
        the coach says was missed) to outline there."""
        # The moment's round is shown on its own: no match before it, none ended by it.
        alone = replace(played, match_before=None, match_ended=None)
        session = cls([alone], viewer_team=viewer_team)
        session.seek(0, step)
        if move is not None:
            session.mark = (0, session._step, move)
        return session

    # --- the Session protocol ----------------------------------------------------------------

    @property
    def local_players(self) -> tuple[str, ...]:
        return ()

    @property
    def table(self) -> Table:
        return self._round.table

    @property
    def view(self) -> State:
        played = self._round
        return played.steps[self._step - 1][1] if self._step else played.start

    @property
    def match(self) -> Match:
        played = self._round
        if self._over and played.match_after is not None:
            return played.match_after
        if played.match_before is None:
            return Match(played.table.team_names, played.table.options.target)
        return played.match_before

    def submit(self, action: Action) -> None:
        """Nobody plays in a replay: every intent is refused."""
        refused = ActionRejected(
            (0, REPLAY_PEER), action, "this is a replay", True, RejectionKind.NOT_YOUR_SEAT
        )
        self._outbox.append(refused)

    def send_cursor(self, player: str, x: float, y: float, holding: tuple[str, ...]) -> None:
        """Nobody is watching this pointer."""

    def poll(self, now: float) -> list[SessionEvent]:
        self._now = max(self._now, now)
        if not self._started:
            self._started = True
            self._enter(0)
        while self._playing and self._due <= self._now:
            if not self._advance():
                break
            self._due += self.interval
        events, self._outbox = self._outbox, []
        return events

    def close(self) -> None:
        self._playing = False

    # --- controls ----------------------------------------------------------------------------

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def speed(self) -> int:
        """The pace multiplier (one of ``SPEEDS``)."""
        return SPEEDS[self._speed]

    @property
    def interval(self) -> float:
        """Seconds between two actions at the current speed."""
        return PACE / self.speed

    def play(self) -> None:
        """Play on (from the first round again once the whole log was shown)."""
        if self.finished:
            self._enter(0)
        self._playing = True
        self._due = self._now + self.interval

    def pause(self) -> None:
        self._playing = False

    def toggle(self) -> None:
        if self._playing:
            self.pause()
        else:
            self.play()

    def step(self) -> None:
        """Pause and show one more action (or the round's end, or the next round)."""
        self.pause()
        if self.waiting_for_next_round:
            self.next_round()
        else:
            self._advance()

    def seek(self, index: int, step: int) -> None:
        """Pause at round ``index`` (from 0), ``step`` actions in, shown as a fresh deal."""
        self._started, self._playing = True, False
        self._enter(min(max(index, 0), len(self._rounds) - 1))
        self._step = min(max(step, 0), len(self._round.steps))
        self._outbox.append(RoundStarted(self._round.number, self.view))

    @property
    def marked(self) -> Action | None:
        """The move to outline now: the coach's, while the replay is at its moment."""
        if self.mark is None:
            return None
        index, step, move = self.mark
        return move if (self._index, self._step, self._over) == (index, step, False) else None

    def faster(self) -> None:
        self._set_speed(self._speed + 1)

    def slower(self) -> None:
        self._set_speed(self._speed - 1)

    def cycle_speed(self) -> None:
        """The next speed, from the fastest back to 1×."""
        self._set_speed((self._speed + 1) % len(SPEEDS))

    def next_round(self) -> None:
        """The next round's deal; in the last round its end; at the very end, round 1 again."""
        if self._index + 1 < len(self._rounds):
            self._enter(self._index + 1)
        elif not self.finished:
            self._step = len(self._round.steps)
            self._moved()
            self._end_round()
            self._playing = False
        else:
            self._enter(0)

    def previous_round(self) -> None:
        """Back to this round's deal; from there (or from its deal), the previous round's."""
        if (self._step == 0 and not self._over) and self._index > 0:
            self._enter(self._index - 1)
        else:
            self._enter(self._index)

    # --- progress ----------------------------------------------------------------------------

    @property
    def round_number(self) -> int:
        return self._round.number

    @property
    def last_round_number(self) -> int:
        """The number of the log's last round."""
        return self._rounds[-1].number

    @property
    def action_number(self) -> int:
        """How many of the round's actions are shown."""
        return self._counts[self._index][self._step]

    @property
    def action_total(self) -> int:
        return self._counts[self._index][-1]

    @property
    def waiting_for_next_round(self) -> bool:
        """The round's end is shown and another round follows."""
        return self._over and self._index + 1 < len(self._rounds)

    @property
    def finished(self) -> bool:
        """The whole log is shown: the last round's end, or where the log stops."""
        at_last = self._index + 1 == len(self._rounds)
        return at_last and self._step == len(self._round.steps) and self._shown_end()

    # --- helpers -----------------------------------------------------------------------------

    @property
    def _round(self) -> LoggedRound:
        return self._rounds[self._index]

    def _shown_end(self) -> bool:
        return self._over or self._round.ended is None

    def _enter(self, index: int) -> None:
        self._index, self._step, self._over = index, 0, False
        played = self._round
        self._outbox.append(RoundStarted(played.number, played.start))
        self._due = self._now + self.interval

    def _advance(self) -> bool:
        """One step forward; False when there is nothing more to show in this round."""
        played = self._round
        if self._step < len(played.steps):
            self._step += 1
            self._moved()
            if self._step == len(played.steps) and played.ended is None:
                self._end_of_log()
            return True
        if not self._over and played.ended is not None:
            self._end_round()
            return True
        if played.ended is None and self._index + 1 < len(self._rounds):
            self._enter(self._index + 1)  # the log skipped this round's end (a snapshot)
            return True
        return False

    def _moved(self) -> None:
        """Report the step just reached: its action, or (a jump) the state as a fresh deal."""
        played = self._round
        if self._step == 0:
            self._outbox.append(RoundStarted(played.number, played.start))
            return
        action, state = played.steps[self._step - 1]
        if action is None:
            self._outbox.append(RoundStarted(played.number, state))
        else:
            self._outbox.append(ActionApplied((self._step, REPLAY_PEER), action, False))

    def _end_round(self) -> None:
        played = self._round
        if self._over or played.ended is None:
            return
        self._over = True
        self._outbox.append(played.ended)
        if played.match_ended is not None:
            self._outbox.append(played.match_ended)
        if self._index + 1 == len(self._rounds):
            self._playing = False

    def _end_of_log(self) -> None:
        if self._index + 1 == len(self._rounds):
            self._playing = False

    def _set_speed(self, index: int) -> None:
        self._speed = min(max(index, 0), len(SPEEDS) - 1)
        self._due = min(self._due, self._now + self.interval)


def _action_counts(played: LoggedRound) -> list[int]:
    """For each number of steps shown, how many of them were actions."""
    counts = [0]
    for action, _ in played.steps:
        counts.append(counts[-1] + (action is not None))
    return counts
