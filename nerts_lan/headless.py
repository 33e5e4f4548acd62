"""Headless peers: `nerts-lan host --headless`, `join --headless`, and `nerts-lan tables`.

For a spare laptop that should host a bot, for scripts and for the tests. A headless peer prints
one JSON object per line on standard output, each with an ``event``:

- ``hosting`` (table, id, port) / ``table_found`` (table, id, address, port, host) / ``joined``
- ``round_started`` (round, teams) / ``round_over`` (round, scores, state_hash, ending, caller)
- ``match_over`` (totals, winner, differences)
- ``peer_went_silent`` (peer, name: its link went quiet, about a second) / ``peer_heard_again``
  (peer, name) / ``peer_gone`` (peer, players: the table let it go; its seats are now played by a
  bot or frozen) / ``peer_returned`` (peer, players: it holds its seats again)
- ``ignored`` (peer, reason: an entry that did not fit the table) / ``error`` (message)

It exits 0 when the match is over or after ``--rounds`` rounds, 1 on an error it cannot play on
from (no table found, refused), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from .advert import LanOptions, TableInfo, make_table_code, normalize_code, persistent_peer_id
from .bots import LEVELS
from .engine import Options
from .lan_session import LanSession
from .matchlog import damage_report, data_folder, read_match_log, replay_match_log
from .replica import RoundEnded
from .session import (
    EntryIgnored,
    MatchEnded,
    PeerGone,
    PeerHeardAgain,
    PeerReturned,
    PeerWentSilent,
    RoundStarted,
)
from .table import TableSettings

__all__ = [
    "add_host_arguments",
    "add_join_arguments",
    "add_tables_arguments",
    "find_tables",
    "run_host",
    "run_join",
    "run_tables",
]


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--headless",
        action="store_true",
        help="no window: print JSON lines (the window comes with the UI)",
    )
    parser.add_argument("--name", default=None, help="your player name (default: your login)")
    parser.add_argument(
        "--interface",
        default=None,
        metavar="ADDRESS",
        help="use only this IPv4 address for mDNS and TCP",
    )
    parser.add_argument(
        "--bot", choices=[lv for lv in LEVELS], default=None, help="let a bot play your seat"
    )
    parser.add_argument(
        "--bot-delay",
        type=float,
        default=1.0,
        metavar="SCALE",
        help="multiply bot reaction delays (0.1 is ten times faster)",
    )
    parser.add_argument(
        "--team",
        type=int,
        default=None,
        metavar="N",
        help="sit on team N (1-8); default: the first free seat",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        metavar="N",
        help="leave after N rounds (default: play the match to its end)",
    )
    parser.add_argument(
        "--code",
        default=None,
        metavar="CODE",
        help="the table's code: a host makes its table private with it, a joiner proves it "
        "knows it (case, spaces and dashes do not matter)",
    )
    parser.add_argument("--peer-id", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="log membership changes and network problems on standard error",
    )
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="give up after this long"
    )


def add_host_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)
    parser.add_argument("--table", default=None, help="the table's name")
    parser.add_argument(
        "--private",
        action="store_true",
        help="give the table a fresh code (printed in the hosting line) that joiners must type",
    )
    parser.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="N",
        help="start when N players (this one included) are seated",
    )
    parser.add_argument("--teams", type=int, default=4, help="most teams at the table (1-8)")
    parser.add_argument("--partnership", action="store_true", help="two players per team")
    parser.add_argument(
        "--lost-seat",
        choices=["bot", "freeze"],
        default="bot",
        help="what happens to the seat of a player whose laptop vanishes",
    )
    parser.add_argument("--flip", type=int, default=3, choices=[1, 3])
    parser.add_argument("--caller-bonus", type=int, default=0)
    parser.add_argument("--target", type=int, default=100)
    parser.add_argument("--kings", action="store_true")
    parser.add_argument("--pile", type=int, default=13)
    parser.add_argument("--work", type=int, default=4)


def add_join_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)
    parser.add_argument(
        "--table", default=None, help="the table's name or id (default: the only table found)"
    )
    parser.add_argument(
        "--wait", type=float, default=10.0, metavar="SECONDS", help="how long to look for the table"
    )


def add_tables_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interface", default=None, metavar="ADDRESS")
    parser.add_argument(
        "--wait", type=float, default=2.0, metavar="SECONDS", help="how long to listen for tables"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per table")


def run_host(args: argparse.Namespace) -> int:
    _require_headless(args, "host")
    name = _player_name(args)
    try:
        options = Options(
            flip=args.flip,
            caller_bonus=args.caller_bonus,
            target=args.target,
            kings=args.kings,
            pile=args.pile,
            work=args.work,
        )
        settings = TableSettings(
            args.table or f"{name}'s table",
            options,
            teams=args.teams,
            per_team=2 if args.partnership else 1,
            lost_seat=args.lost_seat,
        )
    except ValueError as error:
        return _usage("host", str(error))
    if args.players is not None and not 1 <= args.players <= 16:
        return _usage("host", "--players must be from 1 to 16")
    lan = _lan_options(args, name)
    lan.players = args.players or 1
    if args.private and lan.table_code is None:
        lan.table_code = make_table_code()
    session = LanSession.host(lan, settings)
    status = session.status
    _emit(
        {
            "event": "hosting",
            "table": settings.name,
            "id": status.table_id,
            "port": status.port,
            "peer": lan.peer_id,
            "code": lan.table_code,
        }
    )
    return _play(session, args)


def run_join(args: argparse.Namespace) -> int:
    _require_headless(args, "join")
    name = _player_name(args)
    lan = _lan_options(args, name)
    lan.incarnation = int(time.time() * 1000)  # higher after every restart
    tables = find_tables(args.interface, args.wait, wanted=args.table)
    if not tables:
        what = f"table {args.table!r}" if args.table else "any table"
        _emit({"event": "error", "message": f"found no {what} on the network"})
        return 1
    if len(tables) > 1 and not args.table:
        names = ", ".join(sorted(t.name for t in tables))
        _emit(
            {"event": "error", "message": f"several tables found ({names}): pick one with --table"}
        )
        return 1
    table = tables[0]
    _emit(
        {
            "event": "table_found",
            "table": table.name,
            "id": table.table_id,
            "address": table.address,
            "port": table.port,
            "host": table.host_name,
            "needs_code": table.needs_code,
        }
    )
    if table.needs_code and lan.table_code is None:
        _emit({"event": "error", "message": "this table needs a code: ask its host, add --code"})
        return 1
    session = LanSession.join(lan, table)
    return _play(session, args)


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    from .replay import PACE, SPEEDS

    parser.description = (
        "Play a match log back in the window, action by action: one action every "
        f"{PACE:g} s at 1x (the log holds no wall time); speeds "
        f"{', '.join(f'{s}x' for s in SPEEDS)}. "
        "Keys: Space play/pause, Right one action, N/P next/previous round, Up/Down speed, "
        "Esc leave. A damaged log replays everything before the damage."
    )
    parser.add_argument("file", help="a match log (from the logs folder of the data folder)")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="print the rounds and scores as JSON lines (no window)",
    )


def run_replay(args: argparse.Namespace) -> int:
    """Replay a match log, in the window or as JSON lines; a damaged log keeps what came before
    (exit 1), a file that is not a match log exits 2."""
    from .actions import MalformedError

    try:
        records, problem = read_match_log(Path(args.file))
    except OSError as error:
        return _usage("replay", f"cannot read {args.file}: {error.strerror or error}")
    if not args.headless:
        return _replay_in_window(args, records, problem)
    try:
        rounds, ended = replay_match_log(records)
    except (MalformedError, KeyError, TypeError, ValueError, IndexError) as error:
        rounds, ended = [], None
        problem = problem or f"the log does not hold together: {error}"
    for played in rounds:
        _emit(
            {
                "event": "round_over",
                "round": played.number,
                "scores": played.scores,
                "state_hash": played.state_hash,
                "ending": played.ending,
                "caller": played.caller,
            }
        )
    if ended is not None:
        _emit(
            {
                "event": "match_over",
                "totals": ended.match.totals,
                "winner": ended.match.winner,
                "differences": ended.match.differences(),
            }
        )
    if problem is not None:
        sys.stderr.write(f"nerts-lan replay: error: {damage_report(problem, len(records))}\n")
        return 1
    return 0


def _replay_in_window(args: argparse.Namespace, records: list[Any], problem: str | None) -> int:
    """Open the window on the replay (``args.open_window``, wired by the command line)."""
    from .replay import ReplaySession, writer_of

    open_window = getattr(args, "open_window", None)
    if open_window is None:
        return _usage("replay", "there is no window here: use --headless")
    if not records:
        return _usage("replay", problem or f"{args.file} holds no records")
    try:
        session = ReplaySession.from_records(records, problem, writer_of(Path(args.file), records))
    except ValueError as error:
        return _usage("replay", f"{args.file}: {error}")
    if session.notice is not None:
        sys.stderr.write(f"nerts-lan replay: error: {session.notice}\n")
    code = int(open_window(args, session))
    return 1 if code == 0 and session.notice is not None else code


def run_tables(args: argparse.Namespace) -> int:
    if not 0 < args.wait <= 60:
        return _usage("tables", "--wait must be from 0 to 60 seconds")
    tables = find_tables(args.interface, args.wait)
    for table in sorted(tables, key=lambda t: (t.name, t.table_id)):
        if args.json:
            _emit(
                {
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
            )
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
    """Tables advertised on the LAN, listening up to ``wait`` seconds (less once ``wanted`` is
    found)."""
    from net.discovery import Discovery
    from net.runtime import NetworkThread

    from .advert import PROTOCOL, SERVICE_TYPE, table_from_advert

    network = NetworkThread("nerts-browse")
    found: dict[str, TableInfo] = {}

    async def browse() -> Discovery:
        discovery = Discovery(interface)
        discovery.browse(SERVICE_TYPE, lambda name, advert: None)
        return discovery

    discovery = network.run(browse())
    deadline = time.monotonic() + wait
    try:
        while time.monotonic() < deadline:
            time.sleep(0.05)
            found = {}
            for advert in discovery.seen.values():
                table = table_from_advert(advert)
                if table is not None and table.version == PROTOCOL:
                    found[table.table_id] = table
            if wanted and any(wanted in (t.name, t.table_id) for t in found.values()):
                break
    finally:
        network.run(discovery.async_close())
        network.stop()
    tables = list(found.values())
    if wanted:
        tables = [t for t in tables if wanted in (t.name, t.table_id)]
    return tables


# --- helpers ------------------------------------------------------------------------------------


def _configure_logging(args: argparse.Namespace) -> None:
    import logging

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
        force=True,
    )


def _play(session: LanSession, args: argparse.Namespace) -> int:
    """Print the session's events until the match ends, ``--rounds`` are played or time is up."""
    stop = {"now": False}

    def on_signal(signum: int, frame: Any) -> None:
        stop["now"] = True

    with contextlib.suppress(ValueError):  # not in the main thread (tests calling main())
        signal.signal(signal.SIGTERM, on_signal)
    deadline = time.monotonic() + args.timeout if args.timeout else None
    round_number = 0
    result = 0
    joined_reported = False
    try:
        while not stop["now"]:
            if deadline is not None and time.monotonic() > deadline:
                _emit({"event": "error", "message": "timed out"})
                result = 1
                break
            session.wait(0.1)
            events = session.poll()
            refused = session.start_error()
            if refused is not None:
                _emit({"event": "error", "message": f"the table refused us: {refused}"})
                result = 1
                break
            status = session.status
            if not joined_reported and status.joined:
                joined_reported = True
                _emit(
                    {
                        "event": "joined",
                        "peer": status.peer_id,
                        "name": status.name,
                        "log": str(status.log_path) if status.log_path else None,
                    }
                )
            finished = False
            for event in events:
                if isinstance(event, RoundStarted):
                    round_number = event.number
                    table = event.state.table
                    _emit(
                        {
                            "event": "round_started",
                            "round": event.number,
                            "teams": {
                                n: list(p) for n, p in zip(table.team_names, table.team_players)
                            },
                        }
                    )
                elif isinstance(event, RoundEnded):
                    _emit(
                        {
                            "event": "round_over",
                            "round": round_number,
                            "scores": event.scores,
                            "state_hash": event.digest.hex(),
                            "ending": event.outcome.ending,
                            "caller": event.outcome.caller,
                        }
                    )
                    # --rounds counts the match's rounds: a peer that joined late or caught up
                    # leaves after the same round as everyone else.
                    if args.rounds is not None and round_number >= args.rounds:
                        finished = True
                elif isinstance(event, MatchEnded):
                    _emit(
                        {
                            "event": "match_over",
                            "totals": event.match.totals,
                            "winner": event.match.winner,
                            "differences": event.match.differences(),
                        }
                    )
                    finished = True
                elif isinstance(event, PeerWentSilent):
                    _emit({"event": "peer_went_silent", "peer": event.peer, "name": event.name})
                elif isinstance(event, PeerHeardAgain):
                    _emit({"event": "peer_heard_again", "peer": event.peer, "name": event.name})
                elif isinstance(event, PeerGone):
                    _emit(
                        {"event": "peer_gone", "peer": event.peer, "players": list(event.players)}
                    )
                elif isinstance(event, PeerReturned):
                    _emit(
                        {
                            "event": "peer_returned",
                            "peer": event.peer,
                            "players": list(event.players),
                        }
                    )
                elif isinstance(event, EntryIgnored):
                    _emit({"event": "ignored", "peer": event.peer, "reason": event.reason})
            if finished:
                break
    finally:
        session.close(leave=True)
    return result


def _lan_options(args: argparse.Namespace, name: str) -> LanOptions:
    if args.bot_delay < 0 or args.bot_delay > 100:
        raise SystemExit(_usage_text("--bot-delay must be from 0 to 100"))
    if args.team is not None and not 1 <= args.team <= 8:
        raise SystemExit(_usage_text("--team must be from 1 to 8"))
    if args.rounds is not None and args.rounds < 1:
        raise SystemExit(_usage_text("--rounds must be at least 1"))
    _configure_logging(args)
    peer_id = args.peer_id or persistent_peer_id(name)
    code = normalize_code(args.code) if args.code is not None else None
    if args.code is not None and code is None:
        raise SystemExit(_usage_text("--code must not be empty"))
    return LanOptions(
        name=name,
        peer_id=peer_id,
        interface=args.interface,
        team=None if args.team is None else args.team - 1,
        bot=args.bot,
        bot_delay=args.bot_delay,
        log_folder=str(data_folder() / "logs"),
        table_code=code,
    )


def _player_name(args: argparse.Namespace) -> str:
    name = args.name or os.environ.get("USER") or "player"
    if not name or len(name) > 32 or not name.isprintable():
        raise SystemExit(_usage_text("--name must be 1 to 32 printable characters"))
    return str(name)


def _require_headless(args: argparse.Namespace, command: str) -> None:
    if not args.headless:
        raise SystemExit(_usage_text(f"the window is not built yet: use {command} --headless"))


def _emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _usage(command: str, message: str) -> int:
    sys.stderr.write(f"nerts-lan {command}: error: {message}\n")
    return 2


def _usage_text(message: str) -> str:
    return f"nerts-lan: error: {message}"
