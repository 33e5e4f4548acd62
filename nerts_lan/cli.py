"""The ``nerts-lan`` command: one composition root for the engine, bots, network and window.

Every subcommand checks its arguments and its input files as hostile: a problem exits 2 with one
line on standard error that names it, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the process exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        from ui import app as ui_app

        return ui_app.run(args)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error the project promises for every bad argument."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    from ui import app as ui_app  # importing it needs no display: pyglet loads on first use

    parser = _Parser(
        prog="nerts-lan",
        description="Nerts for friends on one LAN. With no command, opens the window.",
    )
    ui_app.add_arguments(parser)
    parser.set_defaults(command=None)
    commands = parser.add_subparsers(title="commands", parser_class=_Parser)

    practice = commands.add_parser("practice", help="play against bots on this machine alone")
    ui_app.add_practice_arguments(practice)
    practice.set_defaults(command="practice", run=ui_app.run_practice)

    scenario = commands.add_parser("scenario", help="replay a JSON scenario and print the result")
    scenario.add_argument("file", help="the scenario file, or - for standard input")
    scenario.set_defaults(command="scenario", run=_run_scenario)

    bench = commands.add_parser(
        "bench", help="measure the engine (and more) and print JSON figures"
    )
    bench.add_argument("--quick", action="store_true", help="fewer repetitions (for smoke tests)")
    bench.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="GROUP",
        help="run only this group of figures (repeatable)",
    )
    bench.set_defaults(command="bench", run=_run_bench)

    from . import headless

    host = commands.add_parser("host", help="host a table on the LAN")
    headless.add_host_arguments(host)
    host.set_defaults(command="host", run=headless.run_host)

    join = commands.add_parser("join", help="join a table on the LAN")
    headless.add_join_arguments(join)
    join.set_defaults(command="join", run=headless.run_join)

    replay = commands.add_parser("replay", help="replay a match log in the window (or --headless)")
    headless.add_replay_arguments(replay)
    replay.set_defaults(command="replay", run=headless.run_replay, open_window=ui_app.run_replay)

    tables = commands.add_parser("tables", help="list the tables on the LAN and exit")
    headless.add_tables_arguments(tables)
    tables.set_defaults(command="tables", run=headless.run_tables)

    from . import sim

    sim_parser = commands.add_parser("sim", help="play bot-only rounds in simulated time")
    sim.add_arguments(sim_parser)
    sim_parser.set_defaults(command="sim", run=sim.run)
    return parser


def _run_scenario(args: argparse.Namespace) -> int:
    import json

    from .actions import MalformedError
    from .scenario import parse_scenario_text, run_scenario

    try:
        if args.file == "-":
            text = sys.stdin.buffer.read().decode("utf-8")
        else:
            with open(args.file, "rb") as handle:
                text = handle.read().decode("utf-8")
        result = run_scenario(parse_scenario_text(text))
    except OSError as error:
        return _fail("scenario", f"cannot read {args.file}: {error.strerror or error}")
    except UnicodeDecodeError:
        return _fail("scenario", f"{args.file} is not UTF-8 text")
    except MalformedError as error:
        return _fail("scenario", str(error))
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


def _run_bench(args: argparse.Namespace) -> int:
    import json

    from .bench import run_benchmarks

    figures = run_benchmarks(quick=args.quick, only=args.only)
    sys.stdout.write(json.dumps(figures, indent=2) + "\n")
    return 0


def _fail(command: str, message: str) -> int:
    sys.stderr.write(f"nerts-lan {command}: error: {message}\n")
    return 2
