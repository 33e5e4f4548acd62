"""A replica of one round: the engine plus the agreed order of everyone's actions.

Every action is named by a key ``(timestamp, peer_id)`` and placed by the network core's
*rank* of that key (``Ranking``: at a table, ``OrderingCore.rank``, which orders equal
timestamps by a draw, not by peer id; the replica never orders keys by themselves). An entry is
*stable* once nothing can still sort before it; until then it is *pending*. The replica keeps

- the stable state (the fold of every stable entry in the order the core made them stable,
  identical on every peer), and
- the pending tail, in rank order, and the *view*: the stable state with the pending tail
  replayed on top, which is what the player sees.

A local action is applied to the view at once (optimistic play). A remote entry that sorts after
every pending one is applied incrementally; one that sorts before some of them makes the view be
rebuilt from the stable state (cheap: states share their piles). Every change is reported as
events, the same for local and remote actions: an action applied, an action that lost a race and
now stands rejected (its card goes back), and the round's end once it is stable.

A reaction (``React``) is an entry like any other and changes no state; the fold also keeps each
player's last accepted reaction, so that one too soon after it is refused by the log's timestamps
(``nerts_lan.rules.reactions``: only when the keys are table time; practice's count entries).

Payloads from the network are hostile: a payload that is not a valid action is kept in the log as
a rejected entry (identically on every peer), never an exception.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

from nerts_lan.rules.actions import (
    ACTION_TYPES,
    Action,
    MalformedError,
    React,
    action_from_wire,
)
from nerts_lan.rules.engine import apply, replay, round_scores
from nerts_lan.rules.reactions import Reacted, react
from nerts_lan.rules.state import Outcome, Rejection, RejectionKind, State, state_digest

__all__ = [
    "MAX_RACE_MARGIN_US",
    "ActionApplied",
    "ActionRejected",
    "EntryKey",
    "Ranking",
    "Replica",
    "ReplicaEvent",
    "RoundEnded",
    "by_key",
    "replay_log",
]

EntryKey: TypeAlias = tuple[int, str]
"""What names an entry of the log: (timestamp, peer id). Not its place: see ``Ranking``."""

Ranking: TypeAlias = Callable[[EntryKey], tuple[Any, ...]]
"""An entry's place in the log, from its key: the log is in ascending rank. At a table it is the
ordering core's (``OrderingCore.rank``): equal timestamps are ordered by a draw, not by peer id,
so comparing keys would put some ties the wrong way round."""


MAX_RACE_MARGIN_US = 10_000_000
"""The longest margin a lost race is told with (10 s): a wider gap between the two keys'
timestamps is not table time on both sides (a peer not yet synchronised stamps with a
Lamport counter alone, docs/protocol.md "Clocks and table time"), so no margin is said."""


def by_key(key: EntryKey) -> EntryKey:
    """The ranking of a log whose keys are one machine's own counter (practice: no two entries
    share a timestamp), the key itself. Never a table's: the core draws its ties."""
    return key


@dataclass(frozen=True, slots=True)
class ActionApplied:
    """An action now counts in the view (first time, or again after a reorder)."""

    key: EntryKey
    action: Action
    local: bool


@dataclass(frozen=True, slots=True)
class ActionRejected:
    """An action does not count in the view: refused at its place in the order.

    ``kind`` says why, for a program to branch on; ``reason`` says it for people. A kind of
    ``LOST_RACE`` means the action had counted in the view until another player's
    earlier-ordered action arrived and took its place (its card goes back): ``lost_race_to``
    names that player, ``winner_key`` is that action's entry key and ``margin_us`` how much
    earlier it was stamped, in microseconds of table time (``key[0] - winner_key[0]``), or None
    when the keys are not table time (practice counts its entries) or too far apart to be.
    """

    key: EntryKey
    action: Action | None
    reason: str
    local: bool
    kind: RejectionKind = RejectionKind.ILLEGAL
    lost_race_to: str | None = None
    winner_key: EntryKey | None = None
    margin_us: int | None = None


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """The round's end is stable: its outcome and scores are final on every peer."""

    outcome: Outcome
    scores: dict[str, int]
    digest: bytes = b""
    """``state_digest`` of the round's final stable state."""


ReplicaEvent: TypeAlias = ActionApplied | ActionRejected | RoundEnded

_Cause: TypeAlias = tuple[EntryKey, "Action | None"]
"""The entry whose arrival rebuilt the view: its key and its action (None: malformed)."""


class Replica:
    """One peer's copy of a round: stable state, pending tail and the optimistic view."""

    def __init__(
        self,
        initial: State,
        local_peer: str,
        authorize: Callable[[str, Action], str | None] | None = None,
        rank: Ranking = by_key,
        *,
        table_time: bool = False,
        reacted: Reacted | None = None,
    ) -> None:
        """``authorize(peer, action)`` returns None when ``peer`` may make ``action``, else the
        reason it may not (a peer acts only for the players it controls); it is asked again when
        an entry becomes stable, so it must answer from the stable log up to that entry.
        ``rank`` places the pending entries (the table's: the core's rank). ``table_time``: the
        keys' timestamps are the core's table time in microseconds, so a lost race can say by
        how much, and reactions are limited by them (practice's are a counter). ``reacted``: the
        last accepted reaction of each player in the log before ``initial`` (a snapshot's)."""
        self.local_peer = local_peer
        self._authorize = authorize
        self._rank = rank
        self._table_time = table_time
        self._stable = initial
        self._stable_reacted: Reacted = dict(reacted or {})
        self._view_reacted: Reacted = self._stable_reacted
        self._stable_count = 0
        self._last_stable_key: EntryKey | None = None
        self._keys: list[EntryKey] = []
        self._ranks: list[tuple[Any, ...]] = []
        self._actions: list[Action | None] = []
        self._malformed: list[str] = []
        self._results: list[Rejection | None] = []
        self._view = initial
        self._ended = False
        self.rebuilds = 0
        """How many times a remote entry made the view be rebuilt (a rollback)."""

    @property
    def view(self) -> State:
        """The state the player sees: stable state plus the pending tail."""
        return self._view

    @property
    def stable(self) -> State:
        """The state of the stable prefix, identical on every peer."""
        return self._stable

    @property
    def stable_reacted(self) -> Reacted:
        """Each player's last accepted reaction in the stable log: its timestamp."""
        return self._stable_reacted

    @property
    def stable_count(self) -> int:
        """How many entries are stable."""
        return self._stable_count

    @property
    def pending(self) -> list[tuple[EntryKey, Action | None, Rejection | None]]:
        """The pending entries in order, each with its current result in the view."""
        return list(zip(self._keys, self._actions, self._results))

    def has(self, key: EntryKey) -> bool:
        """True when ``key`` is pending here, or ranks at or before the last stable entry (it is
        stable, or it never will be)."""
        rank = self._rank(key)
        position = bisect.bisect_left(self._ranks, rank)
        if position < len(self._keys) and self._keys[position] == key:
            return True
        return self._settled(rank)

    def stable_digest(self) -> bytes:
        return state_digest(self._stable)

    def add(self, key: EntryKey, payload: Any) -> list[ReplicaEvent]:
        """Add an entry (local or remote) to the pending tail; the events it causes in the view."""
        rank = self._rank(key)
        if self._settled(rank):
            raise ValueError(f"entry {key} sorts before the stable prefix")
        action, malformed = _decode(payload)
        local = key[1] == self.local_peer
        position = bisect.bisect_left(self._ranks, rank)
        if position < len(self._keys) and self._keys[position] == key:
            raise ValueError(f"entry {key} is already in the log")
        self._keys.insert(position, key)
        self._ranks.insert(position, rank)
        self._actions.insert(position, action)
        self._malformed.insert(position, malformed)
        if position == len(self._keys) - 1:
            result, self._view, self._view_reacted = self._result(
                self._view, self._view_reacted, key, action, malformed
            )
            self._results.append(result)
            return [self._event(key, action, result, local)]
        self._results.insert(position, None)
        return self._rebuild(compare_from=position + 1, inserted=position, cause=(key, action))

    def settle(self, key: EntryKey, payload: Any) -> list[ReplicaEvent]:
        """The round's next stable entry, as the core's stable stream gives it: in the core's
        order, so it comes after every entry made stable before it, whatever its key, and any
        entry pending here that ranks before it was cut off (it will never be stable) and is
        retracted. An entry not pending here is folded at once (a joiner's first entries, an
        entry the network never showed us tentatively); the events it causes in the view."""
        position = self._position(key)
        if position is not None:
            stale = position
        elif self._keys:
            stale = bisect.bisect_left(self._ranks, self._rank(key))
        else:
            stale = 0  # nothing to compare with: a replay folds its log without any rank
        events = self.retract(self._keys[:stale]) if stale else []
        if position is None:
            events.extend(self._fold_unseen(key, payload))
        else:
            self._stabilize_first(1)
        events.extend(self._round_end())
        return events

    def stabilize(self, up_to: EntryKey) -> list[ReplicaEvent]:
        """Every pending entry ranked up to ``up_to`` is stable now."""
        count = bisect.bisect_right(self._ranks, self._rank(up_to))
        if count == 0:
            return []
        self._stabilize_first(count)
        return self._round_end()

    def retract(self, keys: Iterable[EntryKey]) -> list[ReplicaEvent]:
        """Remove pending entries that will never be stable (cut off with an excluded peer)."""
        doomed = set(keys)
        kept = [i for i, key in enumerate(self._keys) if key not in doomed]
        if len(kept) == len(self._keys):
            return []
        first_removed = next(i for i in range(len(self._keys)) if self._keys[i] in doomed)
        self._keys = [self._keys[i] for i in kept]
        self._ranks = [self._ranks[i] for i in kept]
        self._actions = [self._actions[i] for i in kept]
        self._malformed = [self._malformed[i] for i in kept]
        self._results = [self._results[i] for i in kept]
        return self._rebuild(compare_from=first_removed, inserted=None, cause=None)

    # --- helpers -------------------------------------------------------------------------------

    def _position(self, key: EntryKey) -> int | None:
        """Where ``key`` is in the pending tail, None when it is not pending."""
        if not self._keys:
            return None
        position = bisect.bisect_left(self._ranks, self._rank(key))
        return position if position < len(self._keys) and self._keys[position] == key else None

    def _settled(self, rank: tuple[Any, ...]) -> bool:
        """Whether an entry of ``rank`` ranks at or before the last stable entry."""
        last = self._last_stable_key
        return last is not None and rank <= self._rank(last)

    def _stabilize_first(self, count: int) -> None:
        """The first ``count`` pending entries are stable now (the view does not change)."""
        state, reacted = self._stable, self._stable_reacted
        for key, action, malformed in zip(
            self._keys[:count], self._actions[:count], self._malformed[:count]
        ):
            _, state, reacted = self._result(state, reacted, key, action, malformed)
        self._stable, self._stable_reacted = state, reacted
        self._stable_count += count
        self._last_stable_key = self._keys[count - 1]
        del self._keys[:count], self._ranks[:count], self._actions[:count]
        del self._malformed[:count], self._results[:count]

    def _fold_unseen(self, key: EntryKey, payload: Any) -> list[ReplicaEvent]:
        """Fold a stable entry that was not pending (everything pending ranks after it): its
        event, and the view replayed on the new stable state if anything is pending."""
        action, malformed = _decode(payload)
        result, self._stable, self._stable_reacted = self._result(
            self._stable, self._stable_reacted, key, action, malformed
        )
        self._stable_count += 1
        self._last_stable_key = key
        events = [self._event(key, action, result, key[1] == self.local_peer)]
        if not self._keys:
            self._view, self._view_reacted = self._stable, self._stable_reacted
            return events
        return events + self._rebuild(compare_from=0, inserted=None, cause=(key, action))

    def _round_end(self) -> list[ReplicaEvent]:
        """The round's end, once, when the stable state is over."""
        state = self._stable
        if state.outcome is not None and not self._ended:
            self._ended = True
            return [RoundEnded(state.outcome, round_scores(state), state_digest(state))]
        return []

    def _result(
        self,
        state: State,
        reacted: Reacted,
        key: EntryKey,
        action: Action | None,
        malformed: str,
    ) -> tuple[Rejection | None, State, Reacted]:
        """An entry's result at ``state`` (with the players' last reactions ``reacted``), and
        the state and reactions after it."""
        if action is None:
            return Rejection(malformed, RejectionKind.MALFORMED), state, reacted
        if self._authorize is not None:
            refusal = self._authorize(key[1], action)
            if refusal is not None:
                return Rejection(refusal, RejectionKind.NOT_YOUR_SEAT), state, reacted
        after = apply(state, action)
        if isinstance(after, Rejection):
            return after, state, reacted
        if isinstance(action, React) and self._table_time:
            limited = react(reacted, action.by, key[0])
            if isinstance(limited, Rejection):
                return limited, state, reacted
            reacted = limited
        return None, after, reacted

    def _rebuild(
        self, compare_from: int, inserted: int | None, cause: _Cause | None
    ) -> list[ReplicaEvent]:
        """Replay the pending tail from the stable state: an event for the ``inserted`` entry and
        for every entry from ``compare_from`` on whose result changed (``cause``: the entry that
        arrived and made the rebuild, None for a retraction)."""
        self.rebuilds += 1
        state, reacted = self._stable, self._stable_reacted
        events: list[ReplicaEvent] = []
        for index, (key, action) in enumerate(zip(self._keys, self._actions)):
            result, state, reacted = self._result(
                state, reacted, key, action, self._malformed[index]
            )
            local = key[1] == self.local_peer
            if index == inserted:
                events.append(self._event(key, action, result, local))
            elif index >= compare_from:
                before = self._results[index]
                if (before is None) != (result is None):
                    if result is None and action is not None:
                        events.append(ActionApplied(key, action, local))
                    elif result is not None:
                        events.append(self._reordered(key, action, result, local, cause))
            self._results[index] = result
        self._view, self._view_reacted = state, reacted
        return events

    def _reordered(
        self,
        key: EntryKey,
        action: Action | None,
        result: Rejection,
        local: bool,
        cause: _Cause | None,
    ) -> ActionRejected:
        """An entry that counted no longer does: it lost a race to ``cause``, an entry that
        arrived and sorts before it (None: an entry was retracted, and the rules now refuse
        it). The winner's key and the margin come from the keys alone: the same on every peer."""
        winner = None if cause is None else cause[1]
        if cause is None or winner is None:
            return ActionRejected(key, action, result.reason, local, result.kind)
        winner_key = cause[0]
        gap = key[0] - winner_key[0]
        margin = gap if self._table_time and 0 <= gap <= MAX_RACE_MARGIN_US else None
        return ActionRejected(
            key,
            action,
            result.reason,
            local,
            RejectionKind.LOST_RACE,
            lost_race_to=winner.by,
            winner_key=winner_key,
            margin_us=margin,
        )

    @staticmethod
    def _event(
        key: EntryKey, action: Action | None, result: Rejection | None, local: bool
    ) -> ReplicaEvent:
        if result is None and action is not None:
            return ActionApplied(key, action, local)
        if result is None:
            return ActionRejected(key, action, "malformed action", local, RejectionKind.MALFORMED)
        return ActionRejected(key, action, result.reason, local, result.kind)


def _decode(payload: Any) -> tuple[Action | None, str]:
    """The action of a payload (an Action or its wire form), or None and why it is malformed."""
    if isinstance(payload, ACTION_TYPES):
        return payload, ""
    try:
        return action_from_wire(payload), ""
    except MalformedError as error:
        return None, f"malformed action: {error}"


def replay_log(initial: State, entries: Iterable[tuple[EntryKey, Any]]) -> State:
    """The state of a whole log of (key, payload) entries in the log's order (as given, never
    re-sorted by key), malformed ones skipped."""
    decoded = (_decode(payload)[0] for _, payload in entries)
    return replay(initial, [action for action in decoded if action is not None])[0]
