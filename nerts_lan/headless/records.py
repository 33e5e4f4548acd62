"""The JSON lines a headless peer prints for how its table and its laptop fare: members that go
silent, leave, come back, a table that pauses, a player's reaction, and a laptop that moves or
sleeps; and the lines of a table found (the list is in ``nerts_lan.headless.play``'s docstring)."""

from __future__ import annotations

import logging
from typing import Any

from nerts_lan.lan.advert import TableInfo
from nerts_lan.rules.actions import React
from nerts_lan.rules.state import State
from nerts_lan.table.commands import Act, Sit
from nerts_lan.table.replica import ActionApplied, RoundEnded
from nerts_lan.table.session import (
    AddressChanged,
    Away,
    BackAtTable,
    ClockLags,
    EntryIgnored,
    IgnoredKind,
    LeftBehind,
    MatchEnded,
    PeerGone,
    PeerHeardAgain,
    PeerReturned,
    PeerWentSilent,
    Reconnected,
    RoundStarted,
    TableGone,
    TablePaused,
    Unreachable,
)

__all__ = [
    "found_record",
    "handicap_records",
    "is_someone_elses_late_move",
    "listed_record",
    "membership_record",
    "reaction_record",
    "record_of",
    "round_over_record",
    "whereabouts_record",
]

log = logging.getLogger("nerts_lan.headless.play")

Record = dict[str, Any]


def handicap_records(state: State) -> Record:
    """Each handicapped team's deal (its nerts pile's size and work piles at the deal), its score
    multiplier in whole percent and its neutral label, by team name."""
    options = state.table.options
    records: Record = {}
    for name, handicap in options.handicaps:
        records[name] = {
            "pile": options.pile_of(name),
            "work": options.work_of(name),
            "score": handicap.score,
            "label": handicap.label(options.pile, options.work),
        }
    return records


def reaction_record(event: object) -> Record | None:
    """``reaction`` (player, says: its wire name, such as ``nice``): a reaction the table took,
    another player's or this peer's own."""
    if isinstance(event, ActionApplied) and isinstance(event.action, React):
        return {"event": "reaction", "player": event.action.by, "says": event.action.say}
    return None


def whereabouts_record(event: object) -> Record | None:
    """The lines of a laptop that moves or sleeps (``nerts_lan.lan.whereabouts``)."""
    if isinstance(event, AddressChanged):
        return {"event": "address_changed", "old": event.old, "new": event.new}
    if isinstance(event, Reconnected):
        return {"event": "reconnected", "address": event.address, "peers": event.peers}
    if isinstance(event, Away):
        return {"event": "away", "seconds": event.seconds}
    if isinstance(event, BackAtTable):
        return {"event": "back_at_table", "seconds": event.seconds}
    if isinstance(event, TableGone):
        return {"event": "table_gone", "message": event.reason}
    return None


def is_someone_elses_late_move(event: object, me: str) -> bool:
    """Whether ``event`` is another peer's move that the table ignored for coming after its
    round (a move that raced the round's end, or one that peer made before the table let it go):
    every peer folds it alike and nothing of it reached this one's player, so it is the table's
    traffic, not a line of this peer (a peer that rejoins catches up through a few of them).
    This peer's own ignored moves are its player's, and print."""
    if not isinstance(event, EntryIgnored) or event.peer == me:
        return False
    if event.kind is IgnoredKind.REFUSED and event.command == Act.KIND:
        log.info("a move of %s came too late for its round: %s", event.peer, event.reason)
        return True
    return False


def membership_record(event: object) -> Record | None:
    """The lines of the table's members coming, going, falling silent and of what it ignored."""
    if isinstance(event, PeerWentSilent):
        return {"event": "peer_went_silent", "peer": event.peer, "name": event.name}
    if isinstance(event, PeerHeardAgain):
        return {"event": "peer_heard_again", "peer": event.peer, "name": event.name}
    if isinstance(event, ClockLags):
        lag = round(event.lag * 1000)
        return {"event": "clock_lags", "peer": event.peer, "name": event.name, "lag_ms": lag}
    if isinstance(event, PeerGone):
        gone = "peer_left" if event.left else "peer_gone"
        return {
            "event": gone,
            "peer": event.peer,
            "name": event.name,
            "players": list(event.players),
        }
    if isinstance(event, PeerReturned):
        return {
            "event": "peer_returned",
            "peer": event.peer,
            "name": event.name,
            "players": list(event.players),
        }
    if isinstance(event, TablePaused):
        if event.paused:
            return {"event": "table_paused", "reason": "waiting for the table"}
        return {"event": "table_back"}
    if isinstance(event, LeftBehind):
        return {"event": "rejoining", "reason": "the table went on without us"}
    if isinstance(event, Unreachable):
        return {
            "event": "unreachable",
            "wait": event.seconds,
            "exclusions": event.exclusions,
            "unheard": list(event.unheard),
            "message": event.message,
        }
    if isinstance(event, EntryIgnored):
        if event.kind is IgnoredKind.REFUSED and event.command == Sit.KIND:
            # Two peers asked for one seat at once: the later one sits elsewhere (its ``seated``
            # line says where). Lobby traffic, not a fault.
            log.info("%s did not get its seat: %s", event.peer, event.reason)
            return None
        return {"event": "ignored", "peer": event.peer, "reason": event.reason}
    return None


def found_record(event: str, table: TableInfo) -> Record:
    """The line of a table this peer goes to join (``table_found``, ``back_to_table``)."""
    return {
        "event": event,
        "table": table.name,
        "id": table.table_id,
        "address": table.address,
        "port": table.port,
        "host": table.host_name,
        "needs_code": table.needs_code,
    }


def listed_record(table: TableInfo) -> Record:
    """A table as ``nerts-lan tables --json`` prints it."""
    return {
        "table": table.name,
        "id": table.table_id,
        "host": table.host_name,
        "mode": table.mode,
        "seats": f"{table.seats_taken}/{table.seats_total}",
        "state": table.state,
        "address": table.address,
        "port": table.port,
        "needs_code": table.needs_code,
    }


def record_of(event: object) -> Record | None:
    """The JSON line a headless peer prints for ``event`` (None: it prints nothing for it).
    The module's docstring lists them, but for a round's end: ``round_over_record`` (the table's
    ``RoundEnded`` does not know its round's number)."""
    if isinstance(event, RoundStarted):
        table = event.state.table
        teams = {name: list(players) for name, players in zip(table.team_names, table.team_players)}
        record: Record = {"event": "round_started", "round": event.number, "teams": teams}
        if table.options.handicaps:
            record["handicaps"] = handicap_records(event.state)
        return record
    if isinstance(event, MatchEnded):
        match = event.match
        return {
            "event": "match_over",
            "totals": match.totals,
            "winner": match.winner,
            "differences": match.differences(),
        }
    return whereabouts_record(event) or membership_record(event) or reaction_record(event)


def round_over_record(number: int, ended: RoundEnded) -> Record:
    """The line of round ``number``'s end (``round_over``), played or replayed."""
    outcome = ended.outcome
    return {
        "event": "round_over",
        "round": number,
        "scores": ended.scores,
        "state_hash": ended.digest.hex(),
        "ending": outcome.ending,
        "caller": outcome.caller,
    }
