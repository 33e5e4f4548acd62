"""A table over the ordered log: lobby, seats, the agreed round seed, rounds and the match.

Everything a table decides is decided by folding the stable log in order, so every peer decides
the same: who sits where, when the match starts, each round's seed, which peer's actions count for
which player, who takes over a lost player's seat, and the scores. ``TableMachine`` is that fold.
It is pure (no I/O, no clock, no randomness): the session feeds it the log and membership changes
from the network core and carries out the duties it announces (commit, reveal).

Payloads are small dicts with a kind ``k``; every one is checked as hostile input, and one that
does not fit is ignored identically on every peer (an ``EntryIgnored`` event says why).

The round seed is drawn by commit and reveal: once a round is due, every present member commits to
SHA-256 of a random nonce; once every commit is stable, each reveals its nonce; the seed is
SHA-256 over the valid reveals in peer order. No peer can choose the deal, and a peer that reveals
a nonce that does not match its commit simply does not contribute.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, TypeAlias

from .actions import MAX_NAME_LENGTH, Action, MalformedError, action_from_wire
from .codec import state_from_snapshot, state_snapshot
from .engine import BACK_COLOURS, Options, State, Table, deal_round
from .replica import ActionApplied, ActionRejected, EntryKey, Replica, RoundEnded
from .scoring import Match
from .session import EntryIgnored, MatchEnded, PeerGone, PeerReturned, RoundStarted

__all__ = [
    "BOT_LEVELS",
    "CommitDue",
    "EntryIgnored",
    "LobbyChanged",
    "RevealDue",
    "Seat",
    "TableEvent",
    "TableMachine",
    "TableSettings",
    "commit_digest",
]

BOT_LEVELS: Final = ("easy", "medium", "hard")
Phase: TypeAlias = Literal["lobby", "seeding", "revealing", "playing", "over"]


@dataclass(frozen=True)
class TableSettings:
    """What the host chose: the table's name, the rules' options and how seats work."""

    name: str
    options: Options = field(default_factory=Options)
    teams: int = 4
    per_team: int = 1
    lost_seat: Literal["bot", "freeze"] = "bot"
    takeover_level: str = "medium"

    def __post_init__(self) -> None:
        if not self.name or len(self.name) > 40:
            raise ValueError("a table name must be 1 to 40 characters long")
        if type(self.teams) is not int or not 1 <= self.teams <= 8:
            raise ValueError("a table has 1 to 8 teams")
        if self.per_team not in (1, 2) or type(self.per_team) is not int:
            raise ValueError("a team has 1 player, or 2 in partnership mode")
        if self.lost_seat not in ("bot", "freeze"):
            raise ValueError("a lost seat is played by a bot or frozen")
        if self.takeover_level not in BOT_LEVELS:
            raise ValueError(f"bot level must be one of {', '.join(BOT_LEVELS)}")

    @property
    def partnership(self) -> bool:
        return self.per_team == 2

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "options": self.options.to_wire(),
            "teams": self.teams,
            "per_team": self.per_team,
            "lost_seat": self.lost_seat,
            "takeover_level": self.takeover_level,
        }

    @classmethod
    def from_wire(cls, data: Any) -> TableSettings:
        """Settings from a wire dict; ``MalformedError`` names what is wrong."""
        if not isinstance(data, dict):
            raise MalformedError("table settings must be an object")
        options = data.get("options", {})
        if not isinstance(options, dict) or not all(
            isinstance(v, (int, bool)) and isinstance(k, str) for k, v in options.items()
        ):
            raise MalformedError("table options must map names to numbers or booleans")
        try:
            return cls(
                name=_text(data.get("name"), "name", 40),
                options=Options(**options),
                teams=data.get("teams", 4),
                per_team=data.get("per_team", 1),
                lost_seat=data.get("lost_seat", "bot"),
                takeover_level=data.get("takeover_level", "medium"),
            )
        except (TypeError, ValueError) as error:
            raise MalformedError(f"bad table settings: {error}") from None


@dataclass(frozen=True)
class Seat:
    """A player at the table.

    ``owner`` is the peer of the person who sat down (None for a bot seat); ``controller`` is the
    peer whose actions count for this player now (None while frozen); ``bot`` is the level of the
    bot playing it, for a bot seat or a person's seat taken over while its peer is away.
    """

    player: str
    team: int
    owner: str | None
    controller: str | None
    bot: str | None = None


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


def commit_digest(nonce: bytes) -> str:
    """The hex commitment to a nonce."""
    return hashlib.sha256(b"nerts-lan commit v1\x00" + nonce).hexdigest()


class TableMachine:
    """The fold of one table's stable log, plus the current round's replica."""

    def __init__(self, local_peer: str) -> None:
        self.local_peer = local_peer
        self.settings: TableSettings | None = None
        self.host: str | None = None
        self.members: dict[str, str] = {}
        """Present members: peer id to display name."""
        self.seats: list[Seat] = []
        self.ready: set[str] = set()
        self.phase: Phase = "lobby"
        self.round_number = 0
        self.participants: list[str] = []
        self.commits: dict[str, str] = {}
        self.reveals: dict[str, str] = {}
        self.claims: dict[str, str] = {}
        """Peers who joined during the match and claimed a bot's seat: peer to player."""
        self.match: Match | None = None
        self.round_table: Table | None = None
        self.replica: Replica | None = None
        self._events: list[TableEvent] = []

    # --- queries -------------------------------------------------------------------------------

    @property
    def view(self) -> State | None:
        return self.replica.view if self.replica is not None else None

    def seat_of(self, player: str) -> Seat | None:
        return next((seat for seat in self.seats if seat.player == player), None)

    def controlled_by(self, peer: str) -> list[Seat]:
        """The seats whose actions ``peer`` makes now (its person's and any bots it runs)."""
        return [seat for seat in self.seats if seat.controller == peer]

    def can_start(self) -> str | None:
        """None when the host may start the match, else what is missing."""
        if self.phase != "lobby" or self.settings is None:
            return "the match has started"
        if not self.seats:
            return "nobody is seated"
        if self.settings.partnership:
            for team in sorted({seat.team for seat in self.seats}):
                if sum(1 for seat in self.seats if seat.team == team) != 2:
                    return f"team {_team_name(team)} needs two players"
        waiting = sorted({s.owner for s in self.seats if s.owner and s.owner not in self.ready})
        if waiting:
            return f"waiting for {', '.join(self.members.get(p, p) for p in waiting)} to be ready"
        return None

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
        self.members.setdefault(peer, peer)
        players = []
        for index, seat in enumerate(self.seats):
            if seat.owner == peer:
                self.seats[index] = replace(seat, controller=peer, bot=None)
                players.append(seat.player)
        self._events.append(PeerReturned(peer, tuple(players)))
        self._events.append(LobbyChanged())

    def member_gone(self, peer: str) -> None:
        """A member left or was excluded: its seats are played by a bot or frozen."""
        self.members.pop(peer, None)
        self.ready.discard(peer)
        if self.host == peer:
            self.host = min(self.members) if self.members else None
        keeper = min(self.members) if self.members else None
        lost = []
        for index, seat in enumerate(self.seats):
            if seat.controller != peer:
                continue
            if self.phase == "lobby" and seat.owner == peer:
                self.seats[index] = replace(seat, controller=None)
                continue
            if seat.owner is None:
                self.seats[index] = replace(seat, controller=keeper)
            elif self.settings is not None and self.settings.lost_seat == "bot":
                self.seats[index] = replace(
                    seat, controller=keeper, bot=self.settings.takeover_level
                )
            else:
                self.seats[index] = replace(seat, controller=None)
            lost.append(seat.player)
        if self.phase == "lobby":
            self.seats = [seat for seat in self.seats if seat.owner != peer]
        self._events.append(PeerGone(peer, tuple(lost)))
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
        kind = payload.get("k") if isinstance(payload, dict) else None
        handler = _STABLE_HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            self._ignore(peer, f"unknown entry kind {str(kind)[:20]!r}")
            return
        try:
            handler(self, key, payload)
        except MalformedError as error:
            self._ignore(peer, str(error))

    # --- snapshot -------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole stable table as plain data (for a peer that catches up, and for hashing)."""
        return {
            "settings": self.settings.to_wire() if self.settings else None,
            "host": self.host,
            "members": sorted(self.members.items()),
            "seats": [[s.player, s.team, s.owner, s.controller, s.bot] for s in self.seats],
            "ready": sorted(self.ready),
            "phase": self.phase,
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
    def from_snapshot(cls, local_peer: str, data: Any) -> TableMachine:
        """A machine restored from a snapshot; ``MalformedError`` if it does not hold together."""
        machine = cls(local_peer)
        try:
            machine._restore(data)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            if isinstance(error, MalformedError):
                raise
            raise MalformedError(f"bad table snapshot: {error}") from None
        return machine

    # --- helpers --------------------------------------------------------------------------------

    def _ignore(self, peer: str, reason: str) -> None:
        self._events.append(EntryIgnored(peer, reason))

    def _round_action(self, payload: Any) -> Action | None:
        if not (isinstance(payload, dict) and payload.get("k") == "act"):
            return None
        if self.phase != "playing" or payload.get("r") != self.round_number:
            return None
        try:
            return action_from_wire(payload.get("a"))
        except MalformedError:
            return None

    def _authorize(self, peer: str, action: Action) -> str | None:
        seat = self.seat_of(action.by)
        if seat is None:
            return f"{action.by} has no seat at this table"
        if seat.controller != peer:
            return f"{action.by} is not played from that laptop"
        return None

    def _on_create(self, key: EntryKey, payload: dict[str, Any]) -> None:
        if self.settings is not None:
            raise MalformedError("the table was already created")
        self.settings = TableSettings.from_wire(payload.get("settings"))
        self.host = key[1]
        self.members.setdefault(key[1], key[1])
        self._events.append(LobbyChanged())

    def _on_hello(self, key: EntryKey, payload: dict[str, Any]) -> None:
        peer = key[1]
        if peer not in self.members:
            raise MalformedError("hello from someone who is not a member")
        self.members[peer] = _text(payload.get("name"), "name", MAX_NAME_LENGTH)
        self._events.append(LobbyChanged())

    def _on_sit(self, key: EntryKey, payload: dict[str, Any]) -> None:
        peer = key[1]
        if self.phase in ("seeding", "revealing", "playing"):
            self._claim_bot_seat(peer, payload.get("team"))
            return
        settings = self._lobby_settings(peer)
        team = self._free_team(payload.get("team"), settings)
        self.seats = [seat for seat in self.seats if seat.owner != peer]
        self.ready.discard(peer)
        player = self._unique_player(self.members[peer])
        self.seats.append(Seat(player, team, peer, peer))
        self._events.append(LobbyChanged())

    def _claim_bot_seat(self, peer: str, team: Any) -> None:
        """Someone who joined during the match takes a seat a bot plays, from the next round."""
        if peer not in self.members:
            raise MalformedError("not a member of the table")
        if any(seat.owner == peer for seat in self.seats) or peer in self.claims:
            raise MalformedError("already seated")
        claimed = set(self.claims.values())
        seat = next(
            (
                s
                for s in self.seats
                if s.team == team
                and s.bot is not None
                and (s.owner is None or s.owner not in self.members)
                and s.player not in claimed
            ),
            None,
        )
        if seat is None:
            raise MalformedError(f"no seat played by a bot on team {team!r}")
        self.claims[peer] = seat.player
        self._events.append(LobbyChanged())

    def _seat_claimants(self) -> None:
        """At a new round's deal: claimed bot seats go to the people who claimed them."""
        if not self.claims or self.round_table is None:
            return
        for peer, player in sorted(self.claims.items()):
            index = next((i for i, s in enumerate(self.seats) if s.player == player), None)
            if peer not in self.members or index is None or self.seats[index].bot is None:
                continue
            seat = self.seats[index]
            name = self._unique_player(self.members[peer])
            self.seats[index] = Seat(name, seat.team, peer, peer)
        self.claims = {}
        table = self.round_table
        teams = sorted({seat.team for seat in self.seats})
        players = tuple(tuple(s.player for s in self.seats if s.team == t) for t in teams)
        self.round_table = Table(table.options, table.team_names, players, table.back_colours)

    def _on_stand(self, key: EntryKey, payload: dict[str, Any]) -> None:
        self._lobby_settings(key[1])
        self.seats = [seat for seat in self.seats if seat.owner != key[1]]
        self.ready.discard(key[1])
        self._events.append(LobbyChanged())

    def _on_bot(self, key: EntryKey, payload: dict[str, Any]) -> None:
        settings = self._lobby_settings(key[1], host_only=True)
        team = self._free_team(payload.get("team"), settings)
        level = payload.get("level")
        if level not in BOT_LEVELS:
            raise MalformedError(f"bot level must be one of {', '.join(BOT_LEVELS)}")
        number = 1
        while self.seat_of(f"Bot {number}") is not None:
            number += 1
        self.seats.append(Seat(f"Bot {number}", team, None, key[1], level))
        self._events.append(LobbyChanged())

    def _on_unbot(self, key: EntryKey, payload: dict[str, Any]) -> None:
        self._lobby_settings(key[1], host_only=True)
        seat = self.seat_of(payload.get("player"))  # type: ignore[arg-type]
        if seat is None or seat.owner is not None:
            raise MalformedError("no such bot")
        self.seats.remove(seat)
        self._events.append(LobbyChanged())

    def _on_ready(self, key: EntryKey, payload: dict[str, Any]) -> None:
        self._lobby_settings(key[1])
        on = payload.get("on")
        if type(on) is not bool:
            raise MalformedError("'on' must be true or false")
        if on:
            self.ready.add(key[1])
        else:
            self.ready.discard(key[1])
        self._events.append(LobbyChanged())

    def _on_start(self, key: EntryKey, payload: dict[str, Any]) -> None:
        settings = self._lobby_settings(key[1], host_only=True)
        problem = self.can_start()
        if problem is not None:
            raise MalformedError(f"cannot start: {problem}")
        teams = sorted({seat.team for seat in self.seats})
        names = tuple(_team_name(team) for team in teams)
        players = tuple(tuple(s.player for s in self.seats if s.team == team) for team in teams)
        colours = tuple(BACK_COLOURS[team] for team in teams)
        self.round_table = Table(settings.options, names, players, colours)
        self.match = Match(names, settings.options.target)
        self._begin_seeding()

    def _on_commit(self, key: EntryKey, payload: dict[str, Any]) -> None:
        peer = key[1]
        if self.phase != "seeding" or payload.get("r") != self.round_number:
            raise MalformedError("no commit is due")
        if peer not in self.participants or peer in self.commits:
            raise MalformedError("a commit from someone not drawing this seed")
        digest = payload.get("d")
        if not (isinstance(digest, str) and len(digest) == 64 and _is_hex(digest)):
            raise MalformedError("a commit must be 64 hex digits")
        self.commits[peer] = digest
        self._advance_seeding()

    def _on_reveal(self, key: EntryKey, payload: dict[str, Any]) -> None:
        peer = key[1]
        if self.phase != "revealing" or payload.get("r") != self.round_number:
            raise MalformedError("no reveal is due")
        if peer not in self.participants or peer in self.reveals:
            raise MalformedError("a reveal from someone not drawing this seed")
        nonce = payload.get("n")
        if not (isinstance(nonce, str) and len(nonce) == 64 and _is_hex(nonce)):
            raise MalformedError("a reveal must be 64 hex digits")
        # A nonce that does not match its commit counts as no contribution.
        matches = commit_digest(bytes.fromhex(nonce)) == self.commits.get(peer)
        self.reveals[peer] = nonce if matches else ""
        if not matches:
            self._ignore(peer, "its reveal does not match its commit")
        self._advance_seeding()

    def _on_act(self, key: EntryKey, payload: dict[str, Any]) -> None:
        if self.phase != "playing" or self.replica is None or payload.get("r") != self.round_number:
            raise MalformedError("an action outside the round in play")
        replica = self.replica
        # Anything pending before this stable entry was cut off (it will never be stable).
        stale = [k for k, _, _ in replica.pending if k < key]
        if stale:
            self._events.extend(replica.retract(stale))
        if not replica.has(key):
            self._events.extend(replica.add(key, payload.get("a")))
        ended = replica.stabilize(key)
        self._events.extend(ended)
        for event in ended:
            if isinstance(event, RoundEnded):
                self._round_over(event)

    def _round_over(self, ended: RoundEnded) -> None:
        assert self.match is not None
        self.match = self.match.with_round(ended.scores)
        if self.match.over:
            self.phase = "over"
            self._events.append(MatchEnded(self.match))
            self._events.append(LobbyChanged())
        else:
            self._begin_seeding()

    def _begin_seeding(self) -> None:
        self.round_number += 1
        self.phase = "seeding"
        self.participants = sorted(self.members)
        self.commits = {}
        self.reveals = {}
        if self.local_peer in self.participants:
            self._events.append(CommitDue(self.round_number))
        self._events.append(LobbyChanged())
        self._advance_seeding()

    def _advance_seeding(self) -> None:
        if self.phase == "seeding" and all(p in self.commits for p in self.participants):
            self.phase = "revealing"
            if self.local_peer in self.participants:
                self._events.append(RevealDue(self.round_number))
        if self.phase == "revealing" and all(p in self.reveals for p in self.participants):
            self._deal()

    def _deal(self) -> None:
        assert self.round_table is not None
        material = hashlib.sha256(f"nerts-lan round seed v1\x00{self.round_number}".encode())
        for peer in sorted(self.reveals):
            if self.reveals[peer]:
                material.update(b"\x00" + peer.encode() + b"\x00" + self.reveals[peer].encode())
        seed = material.hexdigest()
        self._seat_claimants()
        self.phase = "playing"
        self.replica = Replica(deal_round(self.round_table, seed), self.local_peer, self._authorize)
        self._events.append(RoundStarted(self.round_number, self.replica.view))
        self._events.append(LobbyChanged())

    def _lobby_settings(self, peer: str, host_only: bool = False) -> TableSettings:
        if self.settings is None:
            raise MalformedError("the table has not been created")
        if self.phase != "lobby":
            raise MalformedError("the match has started")
        if peer not in self.members:
            raise MalformedError("not a member of the table")
        if host_only and peer != self.host:
            raise MalformedError("only the host may do that")
        return self.settings

    def _free_team(self, team: Any, settings: TableSettings) -> int:
        if type(team) is not int or not 0 <= team < settings.teams:
            raise MalformedError(f"team must be a number from 0 to {settings.teams - 1}")
        if sum(1 for seat in self.seats if seat.team == team) >= settings.per_team:
            raise MalformedError(f"team {_team_name(team)} is full")
        return team

    def _unique_player(self, name: str) -> str:
        candidate, number = name, 2
        while self.seat_of(candidate) is not None:
            suffix = f" {number}"
            candidate = name[: MAX_NAME_LENGTH - len(suffix)] + suffix
            number += 1
        return candidate

    def _restore(self, data: Any) -> None:
        if not isinstance(data, dict):
            raise MalformedError("a table snapshot must be an object")
        settings = data["settings"]
        self.settings = TableSettings.from_wire(settings) if settings is not None else None
        self.host = data["host"]
        self.members = {
            str(p): _text(n, "member name", MAX_NAME_LENGTH) for p, n in data["members"]
        }
        self.seats = [Seat(str(p), int(t), o, c, b) for p, t, o, c, b in data["seats"]]
        self.ready = {str(p) for p in data["ready"]}
        phase = data["phase"]
        if phase not in ("lobby", "seeding", "revealing", "playing", "over"):
            raise MalformedError("bad phase in table snapshot")
        self.phase = phase
        self.round_number = int(data["round"])
        self.participants = [str(p) for p in data["participants"]]
        self.commits = {str(p): str(d) for p, d in data["commits"]}
        self.reveals = {str(p): str(n) for p, n in data["reveals"]}
        self.claims = {str(p): str(n) for p, n in data.get("claims", [])}
        if self.settings is not None and self.seats and data["rounds"] is not None:
            teams = sorted({seat.team for seat in self.seats})
            names = tuple(_team_name(team) for team in teams)
            self.match = Match(
                names,
                self.settings.options.target,
                tuple(tuple(int(x) for x in row) for row in data["rounds"]),
            )
        if data["state"] is not None:
            stable = state_from_snapshot(data["state"])
            self.round_table = stable.table
            self.replica = Replica(stable, self.local_peer, self._authorize)
        elif self.match is not None and self.settings is not None:
            teams = sorted({seat.team for seat in self.seats})
            self.round_table = Table(
                self.settings.options,
                self.match.team_names,
                tuple(tuple(s.player for s in self.seats if s.team == t) for t in teams),
                tuple(BACK_COLOURS[t] for t in teams),
            )


_STABLE_HANDLERS: Final[dict[str, Callable[[TableMachine, EntryKey, dict[str, Any]], None]]] = {
    "create": TableMachine._on_create,
    "hello": TableMachine._on_hello,
    "sit": TableMachine._on_sit,
    "stand": TableMachine._on_stand,
    "bot": TableMachine._on_bot,
    "unbot": TableMachine._on_unbot,
    "ready": TableMachine._on_ready,
    "start": TableMachine._on_start,
    "commit": TableMachine._on_commit,
    "reveal": TableMachine._on_reveal,
    "act": TableMachine._on_act,
}


def _team_name(team: int) -> str:
    return BACK_COLOURS[team].capitalize()


def _text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= limit or not value.isprintable():
        raise MalformedError(f"{field!r} must be printable text of 1 to {limit} characters")
    return value


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)
