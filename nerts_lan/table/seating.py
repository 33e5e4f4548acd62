"""Who sits where at a table: the seat rules of the lobby, lost seats, and claimed bot seats.

``Seating`` is part of the table's fold (``nerts_lan.table.machine.TableMachine``): it is changed
only by stable entries and membership changes, in log order, so it is the same on every peer. A
well-formed command that the rules do not allow raises ``RefusedError`` (as opposed to the
``MalformedError`` of a payload that is not of the commands' form).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from nerts_lan.rules.actions import MAX_NAME_LENGTH
from nerts_lan.rules.state import BACK_COLOURS, Options, Table
from nerts_lan.table.commands import TableSettings

__all__ = ["RefusedError", "Seat", "Seating", "team_name"]


class RefusedError(Exception):
    """A well-formed command against the table's rules ("only the host may do that")."""


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


@dataclass
class Seating:
    """The seats, who is ready, and the bot seats claimed by people who joined mid-match."""

    seats: list[Seat] = field(default_factory=list)
    ready: set[str] = field(default_factory=set)
    claims: dict[str, str] = field(default_factory=dict)
    """Peers who joined during the match and claimed a bot's seat: peer to player."""

    @classmethod
    def resumed(
        cls,
        seats: tuple[tuple[str, int, str | None, str | None], ...],
        host: str,
        settings: TableSettings,
    ) -> Seating:
        """The seats of a match brought back from a match log (``ResumedMatch.seats``), checked
        against ``settings``: ``host`` plays its own seat and runs the bots, and the seats of the
        people not back yet are lost seats (``gone``) until they return (``returned``)."""
        seating = cls()
        for player, team, owner, bot in seats:
            seating.check_free(team, settings)
            if seating.seat_of(player) is not None:
                raise RefusedError(f"two seats of {player!r}")
            if owner is None or owner == host:
                seating.seats.append(Seat(player, team, owner, host, bot))
            elif settings.lost_seat == "bot":
                seating.seats.append(Seat(player, team, owner, host, settings.takeover_level))
            else:
                seating.seats.append(Seat(player, team, owner, None))
        if settings.partnership and any(seating.team_count(t) != 2 for t in seating.teams()):
            raise RefusedError("a partnership team needs two players")
        return seating

    # --- queries -------------------------------------------------------------------------------

    def seat_of(self, player: str) -> Seat | None:
        return next((seat for seat in self.seats if seat.player == player), None)

    def owns_seat(self, peer: str) -> bool:
        return any(seat.owner == peer for seat in self.seats)

    def team_count(self, team: int) -> int:
        return sum(1 for seat in self.seats if seat.team == team)

    def start_problem(self, settings: TableSettings, members: dict[str, str]) -> str | None:
        """None when the seats allow the match to start, else what is missing."""
        if not self.seats:
            return "nobody is seated"
        if settings.partnership:
            for team in sorted({seat.team for seat in self.seats}):
                if self.team_count(team) != 2:
                    return f"team {team_name(team)} needs two players"
        waiting = sorted({s.owner for s in self.seats if s.owner and s.owner not in self.ready})
        if waiting:
            return f"waiting for {', '.join(members.get(p, p) for p in waiting)} to be ready"
        return None

    def claimable_seat(self, team: int | None, members: dict[str, str]) -> Seat | None:
        """A seat a bot plays (of ``team``, or any) that nobody present owns or claimed."""
        claimed = set(self.claims.values())
        return next(
            (
                seat
                for seat in self.seats
                if (team is None or seat.team == team)
                and seat.bot is not None
                and (seat.owner is None or seat.owner not in members)
                and seat.player not in claimed
            ),
            None,
        )

    def teams(self) -> list[int]:
        """The numbers of the teams with someone seated, in order."""
        return sorted({seat.team for seat in self.seats})

    def team_names(self) -> tuple[str, ...]:
        return tuple(team_name(team) for team in self.teams())

    def table(self, options: Options, team_names: tuple[str, ...] | None = None) -> Table:
        """The round's table as the seats stand: team names, players and back colours."""
        teams = self.teams()
        names = team_names if team_names is not None else self.team_names()
        return Table(
            options.for_teams(names),
            names,
            tuple(tuple(s.player for s in self.seats if s.team == t) for t in teams),
            tuple(BACK_COLOURS[t] for t in teams),
        )

    # --- the lobby -----------------------------------------------------------------------------

    def sit(self, peer: str, name: str, team: int, settings: TableSettings) -> None:
        """``peer`` sits on ``team`` under ``name``, leaving a seat held before; not ready."""
        self.check_free(team, settings)
        self.stand(peer)
        self.seats.append(Seat(self.unique_player(name), team, peer, peer))

    def stand(self, peer: str) -> None:
        self.seats = [seat for seat in self.seats if seat.owner != peer]
        self.ready.discard(peer)

    def add_bot(self, controller: str, team: int, level: str, settings: TableSettings) -> None:
        self.check_free(team, settings)
        number = 1
        while self.seat_of(f"Bot {number}") is not None:
            number += 1
        self.seats.append(Seat(f"Bot {number}", team, None, controller, level))

    def remove_bot(self, player: str) -> None:
        seat = self.seat_of(player)
        if seat is None or seat.owner is not None:
            raise RefusedError("no such bot")
        self.seats.remove(seat)

    def set_ready(self, peer: str, on: bool) -> None:
        if on:
            self.ready.add(peer)
        else:
            self.ready.discard(peer)

    def check_free(self, team: int, settings: TableSettings) -> None:
        if not 0 <= team < settings.teams:
            raise RefusedError(f"team must be a number from 0 to {settings.teams - 1}")
        if self.team_count(team) >= settings.per_team:
            raise RefusedError(f"team {team_name(team)} is full")

    def unique_player(self, name: str) -> str:
        candidate, number = name, 2
        while self.seat_of(candidate) is not None:
            suffix = f" {number}"
            candidate = name[: MAX_NAME_LENGTH - len(suffix)] + suffix
            number += 1
        return candidate

    # --- during the match ----------------------------------------------------------------------

    def claim(self, peer: str, team: int, members: dict[str, str]) -> None:
        """Someone who joined during the match claims a seat a bot plays, from the next round."""
        if self.owns_seat(peer) or peer in self.claims:
            raise RefusedError("already seated")
        seat = self.claimable_seat(team, members)
        if seat is None:
            raise RefusedError(f"no seat played by a bot on team {team!r}")
        self.claims[peer] = seat.player

    def seat_claimants(self, members: dict[str, str]) -> None:
        """At a new round's deal: claimed bot seats go to the people who claimed them."""
        for peer, player in sorted(self.claims.items()):
            index = next((i for i, s in enumerate(self.seats) if s.player == player), None)
            if peer not in members or index is None or self.seats[index].bot is None:
                continue
            seat = self.seats[index]
            self.seats[index] = Seat(self.unique_player(members[peer]), seat.team, peer, peer)
        self.claims = {}

    def rematch(self, members: dict[str, str], settings: TableSettings) -> None:
        """A rematch's seats: those who claimed a bot's seat take it, then everyone moves on
        (``rotate``), but at a table with head starts, which are the teams': a player given one
        keeps it by keeping their seat."""
        if self.claims:
            self.seat_claimants(members)
        if not settings.options.handicaps:
            self.rotate(settings.partnership)

    def rotate(self, partnership: bool) -> None:
        """A rematch: every player moves on to the next team with someone seated (the last to
        the first), so that everyone faces the table from a new place; in a partnership only
        each team's second player moves, so that the partners change."""
        teams = self.teams()
        if len(teams) < 2:
            return
        following = {team: teams[(i + 1) % len(teams)] for i, team in enumerate(teams)}
        firsts = {team: next(s.player for s in self.seats if s.team == team) for team in teams}
        moved = [
            seat
            if partnership and firsts[seat.team] == seat.player
            else replace(seat, team=following[seat.team])
            for seat in self.seats
        ]
        self.seats = sorted(moved, key=lambda seat: (seat.team, seat.player != firsts[seat.team]))

    def returned(self, peer: str) -> tuple[str, ...]:
        """``peer`` came back: it takes its seats back. The players it holds again."""
        players = []
        for index, seat in enumerate(self.seats):
            if seat.owner == peer:
                self.seats[index] = replace(seat, controller=peer, bot=None)
                players.append(seat.player)
        return tuple(players)

    def gone(
        self, peer: str, keeper: str | None, in_lobby: bool, settings: TableSettings | None
    ) -> tuple[str, ...]:
        """``peer`` left: in the lobby its seats go; in the match ``keeper`` runs its bots and
        plays its people's seats by a bot, or they freeze. The players it held."""
        self.ready.discard(peer)
        lost = []
        for index, seat in enumerate(self.seats):
            if seat.controller != peer:
                continue
            if in_lobby and seat.owner == peer:
                self.seats[index] = replace(seat, controller=None)
                continue
            if seat.owner is None:
                self.seats[index] = replace(seat, controller=keeper)
            elif settings is not None and settings.lost_seat == "bot":
                self.seats[index] = replace(seat, controller=keeper, bot=settings.takeover_level)
            else:
                self.seats[index] = replace(seat, controller=None)
            lost.append(seat.player)
        if in_lobby:
            self.seats = [seat for seat in self.seats if seat.owner != peer]
        return tuple(lost)


def team_name(team: int) -> str:
    return BACK_COLOURS[team].capitalize()
