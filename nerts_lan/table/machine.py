"""A table over the ordered log: lobby, seats, the agreed round seed, rounds and the match.

Everything a table decides is decided by folding the stable log in order, so every peer decides
the same: who sits where, when the match starts, each round's seed, which peer's actions count for
which player, who takes over a lost player's seat, and the scores. ``TableMachine`` is that fold.
It is pure (no I/O, no clock, no randomness): the session feeds it the log and membership changes
from the network core and carries out the duties it announces (commit, reveal).

Payloads are table commands (``nerts_lan.table.commands``); every one is checked as hostile input,
and one that does not fit is ignored identically on every peer (an ``EntryIgnored`` event says why,
and whether it was malformed or against the table's rules).

The round seed is drawn by commit and reveal: once a round is due, every present member commits to
SHA-256 of a random nonce; once every commit is stable, each reveals its nonce; the seed is
SHA-256 over the valid reveals in peer order. No peer can choose the deal, and a peer that reveals
a nonce that does not match its commit simply does not contribute.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, TypeAlias

from nerts_lan.rules.actions import MAX_NAME_LENGTH, Action, MalformedError, action_from_wire
from nerts_lan.rules.codec import state_from_snapshot, state_snapshot
from nerts_lan.rules.engine import deal_round
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from nerts_lan.table.commands import (
    Act,
    AddBot,
    Commit,
    Create,
    Hello,
    Ready,
    Rematch,
    RemoveBot,
    ResumedMatch,
    Reveal,
    Sit,
    Stand,
    Start,
    TableSettings,
    checked_text,
    command_from_wire,
)
from nerts_lan.table.replica import (
    ActionApplied,
    ActionRejected,
    EntryKey,
    Ranking,
    Replica,
    RoundEnded,
)
from nerts_lan.table.seating import RefusedError, Seat, Seating
from nerts_lan.table.session import (
    EntryIgnored,
    IgnoredKind,
    MatchEnded,
    PeerGone,
    PeerReturned,
    RoundStarted,
)

__all__ = [
    "CommitDue",
    "LobbyChanged",
    "RevealDue",
    "TableEvent",
    "TableMachine",
    "TablePhase",
    "commit_digest",
]


class TablePhase(str, Enum):
    """Where the table is: seating people, drawing a round's seed, playing it, or done."""

    LOBBY = "lobby"
    SEEDING = "seeding"
    """Every present member commits to a nonce for the next round's seed."""
    REVEALING = "revealing"
    """Every commit is stable: each reveals its nonce."""
    PLAYING = "playing"
    OVER = "over"

    def __str__(self) -> str:
        return self.value  # the wire's and the advert's word, as it was when phases were strings


@dataclass(frozen=True)
class LobbyChanged:
    """Members, seats, readiness or the phase changed."""


@dataclass(frozen=True)
class CommitDue:
    """This peer should commit to a fresh random nonce for ``round``."""

    round: int


@dataclass(frozen=True)
class RevealDue:
    """Every commit for ``round`` is stable: this peer should reveal its nonce."""

    round: int


TableEvent: TypeAlias = (
    LobbyChanged
    | CommitDue
    | RevealDue
    | EntryIgnored
    | RoundStarted
    | MatchEnded
    | PeerGone
    | PeerReturned
    | ActionApplied
    | ActionRejected
    | RoundEnded
)

_IN_MATCH: Final = (TablePhase.SEEDING, TablePhase.REVEALING, TablePhase.PLAYING)


def commit_digest(nonce: bytes) -> str:
    """The hex commitment to a nonce."""
    return hashlib.sha256(b"nerts-lan commit v1\x00" + nonce).hexdigest()


class TableMachine:
    """The fold of one table's stable log, plus the current round's replica."""

    def __init__(self, local_peer: str, rank: Ranking | None = None) -> None:
        """``rank``: the ordering core's (``OrderingCore.rank``), which places tentative entries
        in its order; without it the machine folds the stable log only (a match log's replay),
        and a tentative entry is a ``ValueError``."""
        self.local_peer = local_peer
        self._rank = rank or _stable_log_only
        self.settings: TableSettings | None = None
        self.host: str | None = None
        self.members: dict[str, str] = {}
        """Present members: peer id to display name."""
        self.seating = Seating()
        self.phase = TablePhase.LOBBY
        self.round_number = 0
        self.participants: list[str] = []
        self.commits: dict[str, str] = {}
        self.reveals: dict[str, str] = {}
        self.match: Match | None = None
        self.round_table: Table | None = None
        self.replica: Replica | None = None
        self.resumed_from: str | None = None
        """The table whose match this one goes on with (None: a match of its own)."""
        self._events: list[TableEvent] = []

    # --- queries -------------------------------------------------------------------------------

    @property
    def view(self) -> State | None:
        return self.replica.view if self.replica is not None else None

    @property
    def seats(self) -> list[Seat]:
        return self.seating.seats

    @property
    def ready(self) -> set[str]:
        return self.seating.ready

    @property
    def claims(self) -> dict[str, str]:
        """Peers who joined during the match and claimed a bot's seat: peer to player."""
        return self.seating.claims

    def seat_of(self, player: str) -> Seat | None:
        return self.seating.seat_of(player)

    def controlled_by(self, peer: str) -> list[Seat]:
        """The seats whose actions ``peer`` makes now (its person's and any bots it runs)."""
        return [seat for seat in self.seats if seat.controller == peer]

    def can_start(self) -> str | None:
        """None when the host may start the match, else what is missing."""
        if self.phase is not TablePhase.LOBBY or self.settings is None:
            return "the match has started"
        return self.seating.start_problem(self.settings, self.members)

    def deal_waits_for(self) -> tuple[str, ...]:
        """While the next deal is being drawn: the members whose commit has not come yet."""
        if self.phase is not TablePhase.SEEDING:
            return ()
        return tuple(peer for peer in self.participants if peer not in self.commits)

    def take_events(self) -> list[TableEvent]:
        """What changed since the last call, in order."""
        events, self._events = self._events, []
        return events

    # --- membership (stable, in log order) ------------------------------------------------------

    def member_joined(self, peer: str) -> None:
        self.members.setdefault(peer, peer)
        self._events.append(LobbyChanged())

    def member_returned(self, peer: str) -> None:
        """A member came back (a new incarnation): it takes its seats back."""
        name = self.members.setdefault(peer, peer)
        self._events.append(PeerReturned(peer, self.seating.returned(peer), name))
        self._events.append(LobbyChanged())

    def member_gone(self, peer: str, left: bool = False) -> None:
        """A member left (``left``) or was excluded: its seats are played by a bot or frozen."""
        name = self.members.pop(peer, peer)
        if self.host == peer:
            self.host = min(self.members) if self.members else None
        keeper = min(self.members) if self.members else None
        in_lobby = self.phase is TablePhase.LOBBY
        lost = self.seating.gone(peer, keeper, in_lobby, self.settings)
        self._events.append(PeerGone(peer, lost, left, name))
        if peer in self.participants:
            self.participants.remove(peer)
            self._advance_seeding()
        self._events.append(LobbyChanged())

    # --- the log --------------------------------------------------------------------------------

    def tentative_entry(self, key: EntryKey, payload: Any) -> None:
        """A tentative entry: an action of the current round shows in the view at once."""
        action = self._round_action(payload)
        if action is not None and self.replica is not None and not self.replica.has(key):
            self._events.extend(self.replica.add(key, action))

    def retracted(self, keys: list[EntryKey]) -> None:
        if self.replica is not None:
            self._events.extend(self.replica.retract(keys))

    def stable_entry(self, key: EntryKey, payload: Any) -> None:
        """Fold one stable entry, in log order."""
        peer = key[1]
        try:
            command = command_from_wire(payload)
            _HANDLERS[type(command)](self, key, command)
        except MalformedError as error:
            self._ignore(peer, str(error), IgnoredKind.MALFORMED)
        except RefusedError as error:
            self._events.append(EntryIgnored(peer, str(error), IgnoredKind.REFUSED, command.KIND))

    # --- snapshot -------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole stable table as plain data (for a peer that catches up, and for hashing)."""
        resumed: dict[str, Any] = {}
        if self.resumed_from is not None:
            resumed["resumed_from"] = self.resumed_from
        reacted = self.replica.stable_reacted if self.replica else {}
        if reacted:  # who reacted lately: the next reaction's rate limit
            resumed["reacted"] = sorted([player, at] for player, at in reacted.items())
        return {
            **resumed,
            "settings": self.settings.to_wire() if self.settings else None,
            "host": self.host,
            "members": sorted(self.members.items()),
            "seats": [[s.player, s.team, s.owner, s.controller, s.bot] for s in self.seats],
            "ready": sorted(self.ready),
            "phase": self.phase.value,
            "round": self.round_number,
            "participants": list(self.participants),
            "commits": sorted(self.commits.items()),
            "reveals": sorted(self.reveals.items()),
            "claims": sorted(self.claims.items()),
            "rounds": [list(row) for row in self.match.rounds] if self.match else None,
            "state": state_snapshot(self.replica.stable) if self.replica else None,
        }

    def digest(self) -> bytes:
        """A hash of the stable table, the same on every peer at the same stable index."""
        text = json.dumps(self.snapshot(), sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=16).digest()

    @classmethod
    def from_snapshot(cls, local_peer: str, data: Any, rank: Ranking | None = None) -> TableMachine:
        """A machine restored from a snapshot; ``MalformedError`` if it does not hold together."""
        machine = cls(local_peer, rank)
        try:
            machine._restore(data)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            if isinstance(error, MalformedError):
                raise
            raise MalformedError(f"bad table snapshot: {error}") from None
        return machine

    # --- helpers --------------------------------------------------------------------------------

    def _ignore(self, peer: str, reason: str, kind: IgnoredKind = IgnoredKind.REFUSED) -> None:
        self._events.append(EntryIgnored(peer, reason, kind))

    def _round_action(self, payload: Any) -> Action | None:
        try:
            command = command_from_wire(payload)
            if not isinstance(command, Act) or self.phase is not TablePhase.PLAYING:
                return None
            return action_from_wire(command.action) if command.round == self.round_number else None
        except MalformedError:
            return None

    def _authorize(self, peer: str, action: Action) -> str | None:
        seat = self.seat_of(action.by)
        if seat is None:
            return f"{action.by} has no seat at this table"
        if seat.controller != peer:
            return f"{action.by} is not played from that laptop"
        return None

    def _on_create(self, key: EntryKey, command: Create) -> None:
        if self.settings is not None:
            raise RefusedError("the table was already created")
        if command.resumed is not None:
            self._resume(key[1], command.settings, command.resumed)
        self.settings = command.settings
        self.host = key[1]
        self.members.setdefault(key[1], key[1])
        self._events.append(LobbyChanged())
        if command.resumed is not None:
            self._begin_seeding()  # the match goes on with its next round

    def _resume(self, host: str, settings: TableSettings, resumed: ResumedMatch) -> None:
        """Take the seats and scores of a match brought back from a match log: the host plays
        the seats of those not back yet, as it would after they left (``Seating.resumed``)."""
        seating = Seating.resumed(resumed.seats, host, settings)
        names = seating.team_names()
        if any(len(row) != len(names) for row in resumed.rounds):
            raise RefusedError("the resumed scores do not match its teams")
        match = Match(names, settings.options.target, resumed.rounds)
        if match.over:
            raise RefusedError("the match it would resume is over")
        self.seating, self.match, self.resumed_from = seating, match, resumed.table_id
        self.round_table = seating.table(settings.options)
        self.round_number = len(resumed.rounds)

    def _on_hello(self, key: EntryKey, command: Hello) -> None:
        if key[1] not in self.members:
            raise RefusedError("hello from someone who is not a member")
        self.members[key[1]] = command.name
        self._events.append(LobbyChanged())

    def _on_sit(self, key: EntryKey, command: Sit) -> None:
        peer = key[1]
        if self.phase in _IN_MATCH:
            if peer not in self.members:
                raise RefusedError("not a member of the table")
            self.seating.claim(peer, command.team, self.members)
        else:
            settings = self._lobby_settings(peer)
            self.seating.sit(peer, self.members[peer], command.team, settings)
        self._events.append(LobbyChanged())

    def _on_stand(self, key: EntryKey, command: Stand) -> None:
        self._lobby_settings(key[1])
        self.seating.stand(key[1])
        self._events.append(LobbyChanged())

    def _on_bot(self, key: EntryKey, command: AddBot) -> None:
        settings = self._lobby_settings(key[1], host_only=True)
        self.seating.add_bot(key[1], command.team, command.level, settings)
        self._events.append(LobbyChanged())

    def _on_unbot(self, key: EntryKey, command: RemoveBot) -> None:
        self._lobby_settings(key[1], host_only=True)
        self.seating.remove_bot(command.player)
        self._events.append(LobbyChanged())

    def _on_ready(self, key: EntryKey, command: Ready) -> None:
        self._lobby_settings(key[1])
        self.seating.set_ready(key[1], command.on)
        self._events.append(LobbyChanged())

    def _on_start(self, key: EntryKey, command: Start) -> None:
        settings = self._lobby_settings(key[1], host_only=True)
        problem = self.can_start()
        if problem is not None:
            raise RefusedError(f"cannot start: {problem}")
        self.round_table = self.seating.table(settings.options)
        self.match = Match(self.round_table.team_names, settings.options.target)
        self._begin_seeding()

    def _on_rematch(self, key: EntryKey, command: Rematch) -> None:
        over = self.phase is TablePhase.OVER and command.after == self.round_number
        if not over or key[1] not in self.members or self.settings is None:
            raise RefusedError("no match is over to play again")
        self.seating.rematch(self.members, self.settings)
        self.round_table = self.seating.table(self.settings.options)
        self.match = Match(self.round_table.team_names, self.settings.options.target)
        self._begin_seeding()

    def _on_commit(self, key: EntryKey, command: Commit) -> None:
        peer = key[1]
        if self.phase is not TablePhase.SEEDING or command.round != self.round_number:
            raise RefusedError("no commit is due")
        if peer not in self.participants or peer in self.commits:
            raise RefusedError("a commit from someone not drawing this seed")
        self.commits[peer] = command.digest
        self._events.append(LobbyChanged())  # one fewer to wait for (``deal_waits_for``)
        self._advance_seeding()

    def _on_reveal(self, key: EntryKey, command: Reveal) -> None:
        peer = key[1]
        if self.phase is not TablePhase.REVEALING or command.round != self.round_number:
            raise RefusedError("no reveal is due")
        if peer not in self.participants or peer in self.reveals:
            raise RefusedError("a reveal from someone not drawing this seed")
        # A nonce that does not match its commit counts as no contribution.
        matches = commit_digest(bytes.fromhex(command.nonce)) == self.commits.get(peer)
        self.reveals[peer] = command.nonce if matches else ""
        if not matches:
            self._ignore(peer, "its reveal does not match its commit")
        self._advance_seeding()

    def _on_act(self, key: EntryKey, command: Act) -> None:
        replica = self.replica
        if (
            self.phase is not TablePhase.PLAYING
            or replica is None
            or command.round != self.round_number
        ):
            raise RefusedError("an action outside the round in play")
        # In the core's order: anything pending that ranks before it is cut off (retracted).
        events = replica.settle(key, command.action)
        self._events.extend(events)
        for event in events:
            if isinstance(event, RoundEnded):
                self._round_over(event)

    def _round_over(self, ended: RoundEnded) -> None:
        assert self.match is not None
        self.match = self.match.with_round(ended.scores)
        if self.match.over:
            self.phase = TablePhase.OVER
            self._events.append(MatchEnded(self.match))
            self._events.append(LobbyChanged())
        else:
            self._begin_seeding()

    def _begin_seeding(self) -> None:
        self.round_number += 1
        self.phase = TablePhase.SEEDING
        self.participants = sorted(self.members)
        self.commits = {}
        self.reveals = {}
        if self.local_peer in self.participants:
            self._events.append(CommitDue(self.round_number))
        self._events.append(LobbyChanged())
        self._advance_seeding()

    def _advance_seeding(self) -> None:
        if self.phase is TablePhase.SEEDING and all(p in self.commits for p in self.participants):
            self.phase = TablePhase.REVEALING
            if self.local_peer in self.participants:
                self._events.append(RevealDue(self.round_number))
        if self.phase is TablePhase.REVEALING and all(p in self.reveals for p in self.participants):
            self._deal()

    def _deal(self) -> None:
        assert self.round_table is not None
        material = hashlib.sha256(f"nerts-lan round seed v1\x00{self.round_number}".encode())
        for peer in sorted(self.reveals):
            if self.reveals[peer]:
                material.update(b"\x00" + peer.encode() + b"\x00" + self.reveals[peer].encode())
        seed = material.hexdigest()
        if self.claims:
            self.seating.seat_claimants(self.members)
            table = self.round_table
            self.round_table = self.seating.table(table.options, table.team_names)
        self.phase = TablePhase.PLAYING
        state = deal_round(self.round_table, seed)
        self.replica = Replica(state, self.local_peer, self._authorize, self._rank, table_time=True)
        self._events.append(RoundStarted(self.round_number, self.replica.view))
        self._events.append(LobbyChanged())

    def _lobby_settings(self, peer: str, host_only: bool = False) -> TableSettings:
        if self.settings is None:
            raise RefusedError("the table has not been created")
        if self.phase is not TablePhase.LOBBY:
            raise RefusedError("the match has started")
        if peer not in self.members:
            raise RefusedError("not a member of the table")
        if host_only and peer != self.host:
            raise RefusedError("only the host may do that")
        return self.settings

    def _restore(self, data: Any) -> None:
        if not isinstance(data, dict):
            raise MalformedError("a table snapshot must be an object")
        settings = data["settings"]
        self.settings = TableSettings.from_wire(settings) if settings is not None else None
        self.host = data["host"]
        resumed_from = data.get("resumed_from")
        self.resumed_from = None if resumed_from is None else str(resumed_from)
        self.members = {
            str(p): checked_text(n, "member name", MAX_NAME_LENGTH) for p, n in data["members"]
        }
        self.seating = _seating_from(data)
        try:
            self.phase = TablePhase(data["phase"])
        except ValueError:
            raise MalformedError("bad phase in table snapshot") from None
        self.round_number = int(data["round"])
        self.participants = [str(p) for p in data["participants"]]
        self.commits = {str(p): str(d) for p, d in data["commits"]}
        self.reveals = {str(p): str(n) for p, n in data["reveals"]}
        if self.settings is not None and self.seats and data["rounds"] is not None:
            self.match = Match(
                self.seating.team_names(),
                self.settings.options.target,
                tuple(tuple(int(x) for x in row) for row in data["rounds"]),
            )
        if data["state"] is not None:
            stable = state_from_snapshot(data["state"])
            self.round_table = stable.table
            self.replica = Replica(
                stable,
                self.local_peer,
                self._authorize,
                self._rank,
                table_time=True,
                reacted=_reacted_from(data),
            )
        elif self.match is not None and self.settings is not None:
            self.round_table = self.seating.table(self.settings.options, self.match.team_names)


def _seating_from(data: dict[str, Any]) -> Seating:
    """A snapshot's seats, who is ready and the claimed bot seats."""
    return Seating(
        [Seat(str(p), int(t), o, c, b) for p, t, o, c, b in data["seats"]],
        {str(p) for p in data["ready"]},
        {str(p): str(n) for p, n in data.get("claims", [])},
    )


def _reacted_from(data: dict[str, Any]) -> dict[str, int]:
    """A snapshot's time of each player's last reaction (the reactions' rate limit)."""
    return {checked_text(p, "reacted", MAX_NAME_LENGTH): int(t) for p, t in data.get("reacted", [])}


def _stable_log_only(key: EntryKey) -> tuple[int, int, str]:
    """The rank of a machine given none: it folds the stable log, in the order it comes."""
    raise ValueError(f"tentative entry {key}: this table folds the stable log only (no rank)")


_HANDLERS: Final[dict[type, Callable[[TableMachine, EntryKey, Any], None]]] = {
    Create: TableMachine._on_create,
    Hello: TableMachine._on_hello,
    Sit: TableMachine._on_sit,
    Stand: TableMachine._on_stand,
    AddBot: TableMachine._on_bot,
    RemoveBot: TableMachine._on_unbot,
    Ready: TableMachine._on_ready,
    Start: TableMachine._on_start,
    Rematch: TableMachine._on_rematch,
    Commit: TableMachine._on_commit,
    Reveal: TableMachine._on_reveal,
    Act: TableMachine._on_act,
}
"""The table's reducer: each command's rule, by the command's type."""
