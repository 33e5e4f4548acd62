"""Headless peers: `nerts-lan host --headless`, `join --headless`, and `nerts-lan tables`.

For a spare laptop that should host a bot, for scripts and for the tests. ``join --address
HOST[:PORT]`` asks that address which table is there instead of looking over mDNS (a network that
drops multicast; ``nerts_lan.lan.by_address``), then joins as after mDNS, with the same lines. A
headless peer prints one JSON object per line on standard output, each with an ``event``:

- ``hosting`` (table, id, port, peer, code, addresses: what others type to join by address) /
  ``table_found`` (table, id, address, port, host, needs_code) /
  ``joined``
- ``back_to_table`` (the same fields as ``table_found``): ``host`` was started again after a crash,
  and the table it was at (a log in the data folder, a match not over, the same table name) still
  plays on the LAN: it takes its seat back there, as ``join`` would, and hosts nothing /
  ``previous_table_gone`` (table, id): that table is no longer on the LAN, so it hosts a new one
- ``match_resumed`` (from: the id of the table gone, round: the round the match goes on with,
  totals, rounds: each finished round's scores, in team order): after ``previous_table_gone``
  and ``hosting``, the new table goes on with that table's match as its log holds it (everyone
  had stopped); the players who come back take their seats, bots play the others' meanwhile /
  ``match_not_resumed`` (id, message): that log cannot be trusted (damaged, another player's):
  a new match starts
- ``seated`` (player, team: 1-based, once seated and again if it moves) / ``watching`` (round: a
  match is under way and this peer has no seat; it plays from a later deal if a seat frees up)
- ``round_started`` (round, teams; handicaps if any) / ``round_over`` (round, scores, state_hash,
  ending, caller) / ``match_over`` (totals, winner, differences) / ``reaction`` (player, says:
  ``nice``, ``gg``...)
- ``peer_went_silent`` (peer, name: its link went quiet, about a second) / ``peer_heard_again``
  (peer, name) / ``peer_gone`` (peer, players: it went silent and the table let it go, as after a
  crash or a lost link; its seats are now played by a bot or frozen) / ``peer_left`` (peer,
  players: the same after a deliberate leave, such as the end of its ``--rounds``) /
  ``peer_returned`` (peer, players: it holds its seats again)
- ``table_paused`` (reason): members went silent and those still heard are not enough to go on
  without them; the table waits for them (this peer's plays are not final meanwhile) /
  ``table_back``: it goes on (each play made meanwhile counts at its place, or is refused)
- ``rejoining`` (reason): the table went on without this peer (a long pause, a cut on its side);
  it joins again at once and catches up, without a second ``round_started`` for the round under
  way / ``unreachable`` (wait, exclusions, unheard, message): the table let this peer go that
  many times in a row soon after taking it back (the others cannot hear it: a firewall, a one-way
  Wi-Fi problem; ``unheard`` names the members it could not hear itself); instead of rejoining at
  once it waits ``wait`` seconds, longer each time, while a bot plays its seat
- ``address_changed`` (old, new: this laptop's address changed mid-game, as after roaming or a
  renewed lease; it dials every member again from the new one, which they learn) /
  ``reconnected`` (address, peers: linked again to every member, ``peers`` of them)
- ``away`` (seconds: this process did not run that long, as under a closed lid or SIGSTOP, more
  than the table waits for a silent member) / ``back_at_table`` (seconds: at its seat again; if
  the table let it go meanwhile, a bot played the seat and it rejoined) / ``table_gone``
  (message: the table, or its match, ended while it was away; it exits with status 1)
- ``ignored`` (peer, reason: an entry that did not fit the table; a seat that two peers asked for
  at once is lobby traffic, not printed: the later one sits elsewhere, as its ``seated`` says; so
  is another peer's move that came after its round, while this peer's own such moves print)
- ``error`` (message; ``tables``, each as ``nerts-lan tables --json`` prints it, when ``--table``
  names several)

It exits 0 when the match is over or after ``--rounds`` rounds, 1 on an error it cannot play on
from (no table found, refused, the table gone while it was away), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeAlias

from nerts_lan.bots.bot import LEVELS
from nerts_lan.headless.leaving import LeaveRequest
from nerts_lan.headless.records import (
    found_record,
    is_someone_elses_late_move,
    listed_record,
    record_of,
    round_over_record,
)
from nerts_lan.history.store import record_new_logs
from nerts_lan.lan.advert import (
    LanOptions,
    TableInfo,
    make_table_code,
    normalize_code,
)
from nerts_lan.lan.browse import TableBrowser
from nerts_lan.lan.by_address import AddressError, parse_address, table_at
from nerts_lan.lan.comeback import LOOK_FOR
from nerts_lan.lan.resume import NotResumable, Resumable
from nerts_lan.lan.seat import LanSession
from nerts_lan.lan.service import (
    Comeback,
    as_new_incarnation,
    host_or_return,
    match_back,
    options_for,
    typed_addresses,
)
from nerts_lan.matchlog.file import read_match_log, replay_problems
from nerts_lan.matchlog.rounds import fold_log
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.lobby_view import LobbyView, SeatStatus
from nerts_lan.table.replica import RoundEnded
from nerts_lan.table.session import (
    MatchEnded,
    RoundStarted,
    SessionEvent,
    TableGone,
)
from nerts_lan.usage import UsageError

__all__ = [
    "HostConfig",
    "JoinConfig",
    "PeerConfig",
    "find_tables",
    "host",
    "join",
    "read_log",
    "record_of",
    "round_over_record",
    "run_replay",
    "run_tables",
]

log = logging.getLogger(__name__)

Record: TypeAlias = dict[str, Any]
"""One JSON line of a headless peer."""

_SAME_NAME_WAIT = 1.5
"""Seconds ``find_tables`` listens on once the wanted table is found, for others of its name: an
mDNS responder multicasts a record at most once a second, so a table that just answered someone
else's query answers only our browser's second query, a second after its first."""


@dataclass(frozen=True)
class PeerConfig:
    """How a headless peer takes part, host or joiner; a bad value raises ``ValueError`` naming
    its option."""

    name: str
    interface: str | None = None
    bot: str | None = None
    """Let a bot of this level play the seat."""
    bot_delay: float = 1.0
    team: int | None = None
    """Sit on this team, counted from 1 (None: the first free seat)."""
    rounds: int | None = None
    """Leave after this many rounds of the match (None: play the match to its end)."""
    code: str | None = None
    """The table's code as typed (a host makes its table private with it)."""
    peer_id: str | None = None
    verbose: bool = False
    timeout: float | None = None

    def __post_init__(self) -> None:
        problem = _peer_problem(self)
        if problem is not None:
            raise ValueError(problem)


@dataclass(frozen=True)
class HostConfig:
    """``nerts-lan host --headless``: the peer, the table it opens, when it starts."""

    peer: PeerConfig
    table: TableSettings
    players: int | None = None
    """Start when this many players (this one included) are seated."""
    private: bool = False
    """Give the table a fresh code (unless ``peer.code`` names one)."""

    def __post_init__(self) -> None:
        if self.players is not None and not 1 <= self.players <= 16:
            raise ValueError("--players must be from 1 to 16")


@dataclass(frozen=True)
class JoinConfig:
    """``nerts-lan join --headless``: the peer, and the table it looks for."""

    peer: PeerConfig
    table: str | None = None
    """The table's name or id (None: the only table found)."""
    wait: float = 10.0
    """Seconds to look for the table."""
    address: str | None = None
    """``HOST[:PORT]`` as typed: ask that address which table is there instead of looking for
    tables over mDNS (a network that drops multicast)."""

    def __post_init__(self) -> None:
        if not 0 < self.wait <= 60:
            raise ValueError("--wait must be from 0 to 60 seconds")
        if self.address is not None:
            try:
                parse_address(self.address)
            except AddressError as error:
                raise ValueError(f"--address: {error}") from None


def host(config: HostConfig) -> int:
    """Host a table and play it headless; the exit status. A host restarted while its table
    plays on (see ``comeback``) goes back to its seat there instead; one whose table is gone
    goes on with the match its log holds (``nerts_lan.lan.resume``)."""
    lan = _lan_options(config.peer)
    comeback = host_or_return(lan, config.table.name, lambda found: _advertised(config, found))
    if comeback is not None and comeback.table is not None:
        return _back_to_live_table(lan, config, comeback.table)
    resumable = _match_back(comeback, lan) if comeback is not None else None
    settings = resumable.settings if resumable is not None else config.table
    lan.players = config.players or 1
    if config.private and lan.table_code is None:
        lan.table_code = make_table_code()
    resumed = resumable.match if resumable is not None else None
    session = LanSession.host(lan, settings, resumed=resumed)
    status = session.status
    _emit(
        {
            "event": "hosting",
            "table": settings.name,
            "id": status.table_id,
            "port": status.port,
            "peer": lan.peer_id,
            "code": lan.table_code,
            # What the others type to join by address (a network that drops mDNS).
            "addresses": typed_addresses(lan.interface, status.port),
        }
    )
    if resumable is not None:
        _emit(_resumed_record(resumable))
    return _play(session, config.peer)


def join(config: JoinConfig) -> int:
    """Find a table on the LAN (or ask ``--address``), join it and play headless; the exit
    status."""
    lan = as_new_incarnation(_lan_options(config.peer))
    table = _table_at_address(config) if config.address else _table_on_the_lan(config)
    if table is None:
        return 1
    _emit(found_record("table_found", table))
    if table.needs_code and lan.table_code is None:
        _emit({"event": "error", "message": "this table needs a code: ask its host, add --code"})
        return 1
    session = LanSession.join(lan, table)
    return _play(session, config.peer)


def run_replay(file: str) -> int:
    """Replay a match log as JSON lines (``nerts-lan replay --help`` says which); a log that is
    damaged or holds records that cannot be applied replays everything else and says what it left
    out, one line each on stderr (exit 1); a file that cannot be read exits 2."""
    records, problem = read_log(file)
    folded = fold_log(records)
    if folded.joined_at is not None:
        note = f"joined at round {folded.joined_at}: the log starts from a snapshot"
        _emit({"event": "log_starts", "round": folded.joined_at, "note": note})
    ended = [(played.number, played.ended) for played in folded.rounds if played.ended]
    for number, end in ended:
        _emit(round_over_record(number, end))
    if folded.ended is not None:
        _emit_event(folded.ended)
    # The rounds it keeps are those it printed: the ones that ended.
    problems = replay_problems(folded.ignored, folded.records, len(ended), problem)
    for line in problems:
        sys.stderr.write(f"nerts-lan replay: error: {line}\n")
    return 1 if problems else 0


def run_tables(args: argparse.Namespace) -> int:
    if not 0 < args.wait <= 60:
        return _usage("tables", "--wait must be from 0 to 60 seconds")
    tables = find_tables(args.interface, args.wait)
    for table in tables:
        if args.json:
            _emit(listed_record(table))
        else:
            private = ", needs a code" if table.needs_code else ""
            print(
                f"{table.name}  [{table.table_id}]  hosted by {table.host_name}, {table.mode}, "
                f"{table.seats_taken}/{table.seats_total} seats, {table.state}{private}, "
                f"{table.address}:{table.port}"
            )
    if not tables and not args.json:
        print("no tables found")
    return 0


def find_tables(interface: str | None, wait: float, wanted: str | None = None) -> list[TableInfo]:
    """Tables advertised on the LAN (by name, then id), listening up to ``wait`` seconds (less
    once ``wanted``, a table's name or id, is found: 1.5 s more, for others of that name;
    then only the tables it names)."""

    def named(table: TableInfo) -> bool:
        return wanted in (table.name, table.table_id)

    browser = TableBrowser(interface)
    try:
        browser.started()
        deadline = time.monotonic() + wait
        tables = browser.tables()
        found = False
        while time.monotonic() < deadline:
            if wanted and not found and any(map(named, tables)):
                # Listen on through the browser's next query: another table of this name may
                # answer only that one (see _SAME_NAME_WAIT).
                found, deadline = True, min(deadline, time.monotonic() + _SAME_NAME_WAIT)
            browser.wait(deadline - time.monotonic())
            tables = browser.tables()
    finally:
        browser.close()
    return [t for t in tables if named(t)] if wanted else tables


def read_log(file: str) -> tuple[list[Any], str | None]:
    """A match log's records and the problem that cut them short (a ``UsageError`` when the file
    cannot be read)."""
    try:
        return read_match_log(Path(file))
    except OSError as error:
        _usage("replay", f"cannot read {file}: {error.strerror or error}")


# --- helpers ------------------------------------------------------------------------------------


def _table_at_address(config: JoinConfig) -> TableInfo | None:
    """The table at ``--address`` (None: an error line said why there is none)."""
    assert config.address is not None
    try:
        table = table_at(*parse_address(config.address))
    except AddressError as error:
        _emit({"event": "error", "message": str(error)})
        return None
    if config.table is not None and config.table not in (table.name, table.table_id):
        message = f"the table at {config.address} is {table.name!r}, not {config.table!r}"
        _emit({"event": "error", "message": message})
        return None
    return table


def _table_on_the_lan(config: JoinConfig) -> TableInfo | None:
    """The one table mDNS finds (by ``--table``, when given); None: an error line said why."""
    tables = find_tables(config.peer.interface, config.wait, wanted=config.table)
    if not tables:
        what = f"table {config.table!r}" if config.table else "any table"
        hint = ": if the network blocks discovery, join by address (--address HOST:PORT)"
        _emit({"event": "error", "message": f"found no {what} on the network{hint}"})
        return None
    by_id = [t for t in tables if t.table_id == config.table]
    tables = by_id or tables
    if len(tables) > 1:
        if config.table:
            message = f"{len(tables)} tables are named {config.table!r}: pick one with --table ID"
        else:
            names = ", ".join(sorted(t.name for t in tables))
            message = f"several tables found ({names}): pick one with --table"
        listed = [listed_record(t) for t in tables]
        _emit({"event": "error", "message": message, "tables": listed})
        return None
    return tables[0]


def _configure_logging(verbose: bool) -> None:
    from net import show_send_errors

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
        force=True,
    )
    show_send_errors(verbose)  # a failed mDNS send is one line, and only with --verbose


def _play(session: LanSession, args: PeerConfig) -> int:
    """Print the session's events until the match ends, ``--rounds`` are played or time is up
    (or it is asked to leave: ``nerts_lan.headless.leaving``), then leave the table; the exit
    status."""
    stop = LeaveRequest()
    stop.listen()
    deadline = time.monotonic() + args.timeout if args.timeout else None
    progress = _Progress(args.rounds)
    try:
        while not stop.requested and not progress.finished:
            if deadline is not None and time.monotonic() > deadline:
                _emit({"event": "error", "message": "timed out"})
                return 1
            session.wait(0.1)
            for reaction in stop.reactions_for(session.local_players):  # ``react gg`` lines
                session.submit(reaction)
            events = session.poll()
            refused = session.start_error()
            if refused is not None:
                _emit({"event": "error", "message": f"the table refused us: {refused}"})
                return 1
            _report(session.status, events, progress)
            _report_seat(session.lobby, progress)
    finally:
        try:
            session.close(leave=True)
            unrecorded = record_new_logs()  # the match history, from the log just closed
            if unrecorded is not None:
                sys.stderr.write(f"nerts-lan: {unrecorded}\n")
        finally:
            stop.left()  # a closing Windows console waits for this
    return 1 if progress.gone else 0


def _back_to_live_table(lan: LanOptions, config: HostConfig, table: TableInfo) -> int:
    """Rejoin the live table of the data folder, which the LAN still has: the exit status."""
    _emit(found_record("back_to_table", table))
    if table.needs_code and config.peer.code is None:
        message = "your table needs its code: host again with --code and the code it printed"
        _emit({"event": "error", "message": message})
        return 1
    return _play(LanSession.join(as_new_incarnation(lan), table), config.peer)


def _match_back(comeback: Comeback, lan: LanOptions) -> Resumable | None:
    """The table of ``comeback`` is gone from the LAN (``previous_table_gone``): the match its
    log holds to go on with, or None (``match_not_resumed`` says why, when there is a why)."""
    previous = comeback.previous
    _emit({"event": "previous_table_gone", "table": previous.name, "id": previous.table_id})
    decision = match_back(comeback, lan)
    if isinstance(decision, NotResumable):
        if decision.told:
            message = f"{decision.reason}: a new match starts"
            _emit({"event": "match_not_resumed", "id": previous.table_id, "message": message})
        return None
    return decision


def _resumed_record(resumable: Resumable) -> Record:
    """The line of a match that goes on from a match log (``match_resumed``)."""
    return {
        "event": "match_resumed",
        "from": resumable.match.table_id,
        "round": resumable.next_round,
        "totals": resumable.totals,
        "rounds": [list(row) for row in resumable.match.rounds],
    }


def _advertised(config: HostConfig, table_id: str) -> TableInfo | None:
    """The advert of ``table_id``, if the LAN has it within ``LOOK_FOR`` seconds."""
    wanted = find_tables(config.peer.interface, LOOK_FOR, wanted=table_id)
    return next((table for table in wanted if table.table_id == table_id), None)


@dataclass
class _Progress:
    """Where a headless peer is in the match, from what it printed."""

    rounds: int | None
    """``--rounds``: leave after this round of the match (None: play to its end)."""
    round_number: int = 0
    joined_reported: bool = False
    held: list[SessionEvent] = field(default_factory=list)
    """Events that came before the table had us (a restarted host catching up from a
    snapshot): they wait for the ``joined`` line, which comes first."""
    seat_reported: Record | None = None
    """The last ``seated`` or ``watching`` line."""
    finished: bool = False
    gone: bool = False
    """The table went while this peer was away (``table_gone``)."""


def _report(status: SeatStatus, events: list[SessionEvent], progress: _Progress) -> None:
    """Print the ``joined`` line once the table has us, then a line per event.

    The network thread posts the events a catch-up makes (the round under way) before the
    status that says we joined, and a poll can fall between them: until the table has us, a
    round's events wait, with whatever comes after them."""
    if not progress.joined_reported:
        if not status.joined:
            if progress.held or any(isinstance(event, _ROUND_EVENTS) for event in events):
                progress.held += events
                return
        else:
            progress.joined_reported = True
            log = str(status.log_path) if status.log_path else None
            _emit({"event": "joined", "peer": status.peer_id, "name": status.name, "log": log})
            events, progress.held = [*progress.held, *events], []
    for event in events:
        if progress.finished and not isinstance(event, _AFTER_THE_LAST_ROUND):
            continue  # dealt after the rounds asked for, in the same poll: this peer is leaving
        if isinstance(event, RoundStarted):
            if event.number == progress.round_number:
                continue  # a snapshot caught this peer up within a round it already announced
            progress.round_number = event.number
        elif isinstance(event, RoundEnded):
            # --rounds counts the match's rounds: a peer that joined late or caught up leaves
            # after the same round as everyone else.
            if progress.rounds is not None and progress.round_number >= progress.rounds:
                progress.finished = True
            _emit(round_over_record(progress.round_number, event))
            continue
        elif isinstance(event, MatchEnded):
            progress.finished = True
        elif isinstance(event, TableGone):
            progress.finished = progress.gone = True
        elif is_someone_elses_late_move(event, status.peer_id):
            continue
        _emit_event(event)


_ROUND_EVENTS = (RoundStarted, RoundEnded, MatchEnded)
"""The events of a match in play: a member's, printed after its ``joined`` line."""

_AFTER_THE_LAST_ROUND = (MatchEnded, TableGone)
"""What still prints once ``--rounds`` are played: how the match or table ended, if in the same
poll."""


def _report_seat(lobby: LobbyView | None, progress: _Progress) -> None:
    """Say when this peer takes a seat (or moves), and when it watches a match under way
    without one (it joined a full table, or one with no seat a bot plays)."""
    if lobby is None:
        return
    seat = lobby.my_seat
    if seat is not None:
        record = {"event": "seated", "player": seat.player, "team": seat.team + 1}
    elif lobby.phase != "lobby":
        record = {"event": "watching", "round": lobby.round_number}
    else:
        return
    if record != progress.seat_reported:
        progress.seat_reported = record
        _emit(record)


def _lan_options(peer: PeerConfig) -> LanOptions:
    _configure_logging(peer.verbose)
    return options_for(
        peer.name,
        interface=peer.interface,
        team=None if peer.team is None else peer.team - 1,
        bot=peer.bot,
        bot_delay=peer.bot_delay,
        code=peer.code,
        peer_id=peer.peer_id,
    )


def _peer_problem(peer: PeerConfig) -> str | None:
    if not peer.name or len(peer.name) > 32 or not peer.name.isprintable():
        return "--name must be 1 to 32 printable characters"
    if peer.bot is not None and peer.bot not in LEVELS:
        return f"--bot must be one of {', '.join(LEVELS)}"
    if not 0 <= peer.bot_delay <= 100:
        return "--bot-delay must be from 0 to 100"
    if peer.team is not None and not 1 <= peer.team <= 8:
        return "--team must be from 1 to 8"
    if peer.rounds is not None and peer.rounds < 1:
        return "--rounds must be at least 1"
    if peer.code is not None and normalize_code(peer.code) is None:
        return "--code must not be empty"
    return None


def _emit(record: Record) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _emit_event(event: object) -> None:
    record = record_of(event)
    if record is not None:
        _emit(record)


def _usage(command: str, message: str) -> NoReturn:
    raise UsageError(command, message)
