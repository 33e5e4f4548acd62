"""Every option of every ``nerts-lan`` subcommand, and nothing else: building the parser loads no
front end (no window, no network), so a bad argument fails before anything opens."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from nerts_lan.bots.bot import LEVELS
from nerts_lan.cli import commands, doctor, faults, sounds
from nerts_lan.cli.rules import add_handicap_option, add_rule_options
from nerts_lan.cli.stats import add_stats_options, run_stats
from nerts_lan.lab.sim import DEFAULT_MAX_ACTIONS
from nerts_lan.lan.advert import DEFAULT_PORT
from nerts_lan.replay import PACE, SPEEDS
from nerts_lan.usage import USAGE_EXIT

__all__ = ["build_parser", "parse"]


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The parsed arguments, each subcommand's ``run`` among them; a bad one exits 2 with one
    line that names the subcommand (an unknown option included)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        named = parser.subcommands.get(args.command, parser)
        named.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def build_parser() -> _Parser:
    """The ``nerts-lan`` parser; each subcommand's ``run`` default takes the parsed arguments."""
    parser = _Parser(
        prog="nerts-lan",
        description="Nerts for friends on one LAN. With no command, opens the window.",
    )
    _add_window_options(parser, lan=True)
    parser.set_defaults(command="", run=commands.run_window)
    subcommands = parser.add_subparsers(title="commands", parser_class=_Parser)
    parser.subcommands = subcommands.choices

    practice = subcommands.add_parser("practice", help="play against bots on this machine alone")
    _add_practice_options(practice)
    practice.set_defaults(command="practice", run=commands.run_practice)

    scenario = subcommands.add_parser(
        "scenario", help="replay a JSON scenario and print the result"
    )
    scenario.add_argument("file", help="the scenario file, or - for standard input")
    scenario.set_defaults(command="scenario", run=commands.run_scenario)

    bench = subcommands.add_parser(
        "bench", help="measure the engine (and more) and print JSON figures"
    )
    _add_bench_options(bench)
    bench.set_defaults(command="bench", run=commands.run_bench)

    host = subcommands.add_parser("host", help="host a table on the LAN")
    _add_host_options(host)
    host.set_defaults(command="host", run=commands.run_host)

    join = subcommands.add_parser("join", help="join a table on the LAN")
    _add_join_options(join)
    join.set_defaults(command="join", run=commands.run_join)

    replay = subcommands.add_parser(
        "replay", help="replay a match log in the window (or --headless)"
    )
    _add_replay_options(replay)
    replay.set_defaults(command="replay", run=commands.run_replay)

    tables = subcommands.add_parser("tables", help="list the tables on the LAN and exit")
    _add_tables_options(tables)
    tables.set_defaults(command="tables", run=commands.run_tables)

    sim = subcommands.add_parser("sim", help="play bot-only rounds in simulated time")
    _add_sim_options(sim)
    sim.set_defaults(command="sim", run=commands.run_sim)

    stats = subcommands.add_parser("stats", help="the match history of this laptop")
    add_stats_options(stats)
    stats.set_defaults(command="stats", run=run_stats)

    faults.register(subcommands)
    doctor.register(subcommands)
    sounds.register(subcommands)
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error the project promises for every bad argument."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subcommands: Mapping[str, argparse.ArgumentParser] = {}
        """The root's subcommands' parsers, by name."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message}\n")


def _add_window_options(parser: argparse.ArgumentParser, lan: bool) -> None:
    """Options of the window (``nerts-lan`` with no command, and ``practice`` without the LAN's)."""
    parser.add_argument("--width", type=int, default=1280, help="window width (1280)")
    parser.add_argument("--height", type=int, default=800, help="window height (800)")
    parser.add_argument("--fullscreen", action="store_true", help="open full screen")
    parser.add_argument(
        "--readout",
        action="store_true",
        help="print every move as a sentence to standard output, for a screen reader "
        "(the Move readout option says whose; when it is off, everyone's)",
    )
    if lan:
        parser.add_argument(
            "--interface",
            default=None,
            metavar="ADDRESS",
            help="use only this IPv4 address for the LAN (mDNS and TCP)",
        )


def _add_practice_options(parser: argparse.ArgumentParser) -> None:
    _add_window_options(parser, lan=False)
    parser.add_argument("--name", default=None, help="your name (the remembered one)")
    parser.add_argument("--opponents", type=int, default=None, help="bot teams, 0 to 7 (3)")
    parser.add_argument("--level", default=None, choices=LEVELS, help="bot level (medium)")
    parser.add_argument("--partners", action="store_true", help="partnership: a bot partner")
    parser.add_argument("--seed", default=None, help="seed of the deals and bots (random)")
    add_rule_options(parser)


def _add_bench_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (for smoke tests)")
    parser.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="GROUP",
        help="run only this group of figures (repeatable)",
    )


def _add_peer_options(parser: argparse.ArgumentParser) -> None:
    """What ``host`` and ``join`` share: who this peer is and how it plays."""
    parser.add_argument(
        "--headless",
        action="store_true",
        help="no window: print JSON lines (the window hosts and joins from its lobby)",
    )
    parser.add_argument("--name", default=None, help="your player name (default: your login)")
    parser.add_argument(
        "--interface",
        default=None,
        metavar="ADDRESS",
        help="use only this IPv4 address for mDNS and TCP",
    )
    parser.add_argument("--bot", choices=LEVELS, default=None, help="let a bot play your seat")
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


def _add_host_options(parser: argparse.ArgumentParser) -> None:
    _add_peer_options(parser)
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
        "--countdown",
        type=int,
        default=0,
        metavar="SECONDS",
        help="hold everyone still this long after each deal, 0-10 (0; the window's tables: 3)",
    )
    parser.add_argument(
        "--lost-seat",
        choices=["bot", "freeze"],
        default="bot",
        help="what happens to the seat of a player whose laptop vanishes",
    )
    add_rule_options(parser)
    add_handicap_option(parser)


def _add_join_options(parser: argparse.ArgumentParser) -> None:
    _add_peer_options(parser)
    parser.add_argument(
        "--table",
        default=None,
        help="the table's name or id (default: the only table found); a name two tables share "
        "is refused with both listed: give the id (nerts-lan tables shows them)",
    )
    parser.add_argument(
        "--wait", type=float, default=10.0, metavar="SECONDS", help="how long to look for the table"
    )
    parser.add_argument(
        "--address",
        default=None,
        metavar="HOST:PORT",
        help="join the table at this address (an IPv4 address or a host name; the port "
        f"defaults to {DEFAULT_PORT}) instead of looking for it: for networks that block "
        "discovery (the host's lobby shows its addresses)",
    )


def _add_replay_options(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Play a match log back in the window, action by action: one action every "
        f"{PACE:g} s at 1x (the log holds no wall time); speeds "
        f"{', '.join(f'{s}x' for s in SPEEDS)}. "
        "Keys: Space play/pause, Right one action, N/P next/previous round, Up/Down speed, "
        "Esc leave. A damaged log replays everything it can: a log cut short replays the records "
        "before the cut; a damaged record, or one missing, doubled or out of its place, stops the "
        "replay there (the record named by its number); a log that ends on a whole record "
        "replays as a log whose writer stopped there; a record that passes its checksum but "
        "cannot be applied (an entry that "
        "is not a table command, or doubled, or out of its timestamps' order, a snapshot that "
        "cannot be installed, with the records after it "
        "up to the next snapshot) is ignored and named by its number. "
        "With --headless it prints JSON lines: log_starts (round, note: a log that starts from a "
        "snapshot, written by a peer that joined at that round), round_over (round, scores, "
        "state_hash, ending, caller), match_over (totals, winner, differences). "
        "Exit status: 0 the whole log replayed; 1 it replayed what it could and standard error "
        "says, one line each, what it left out and why; 2 the file cannot be read."
    )
    parser.add_argument("file", help="a match log (from the logs folder of the data folder)")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="print the rounds and scores as JSON lines (no window)",
    )
    parser.add_argument(
        "--coach",
        action="store_true",
        help="with --headless: after the rounds, a coach line per round and player: the few "
        "moments that cost that seat the most (kind, at: seconds into the round, action: the "
        "replay's step, move: the move missed, text)",
    )
    _add_window_options(parser, lan=False)


def _add_tables_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interface", default=None, metavar="ADDRESS")
    parser.add_argument(
        "--wait", type=float, default=2.0, metavar="SECONDS", help="how long to listen for tables"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per table")


def _add_sim_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--teams", type=int, default=2, help="teams at the table, 1 to 8 (2)")
    parser.add_argument(
        "--players", type=int, default=1, help="players per team; 2 is partnership mode (1)"
    )
    parser.add_argument(
        "--levels",
        default="medium",
        help=f"bot level per team, comma-separated, or one for all: {', '.join(LEVELS)} (medium)",
    )
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("--rounds", type=int, default=None, help="rounds to play (20)")
    amount.add_argument(
        "--matches",
        type=int,
        default=None,
        help="play matches to the target instead of single rounds",
    )
    parser.add_argument("--seed", default="nerts", help="seed of everything (nerts)")
    parser.add_argument(
        "--bot-delay",
        type=float,
        default=1.0,
        metavar="SCALE",
        help="scale of the bots' reaction delays; 0 makes them instant (1)",
    )
    parser.add_argument(
        "--max-actions",
        type=int,
        default=DEFAULT_MAX_ACTIONS,
        help=f"safety cap on actions per round ({DEFAULT_MAX_ACTIONS})",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress",
        action="store_true",
        default=None,
        help="show a progress bar on standard error (default: when a terminal)",
    )
    shown.add_argument("--no-progress", dest="progress", action="store_false")
    add_rule_options(parser)
