"""What each ``nerts-lan`` subcommand does with its parsed arguments: check them into a typed
config (a bad one is a ``UsageError``), then hand that to its front end.

The front ends load here, inside each command: the window's (``ui.app``, pyglet) only for the
window's commands, so ``host --headless``, ``tables`` and ``sim`` never load pyglet.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from nerts_lan.cli.rules import handicaps_from_args, options_from_args
from nerts_lan.usage import UsageError

if TYPE_CHECKING:
    from nerts_lan.headless.play import PeerConfig
    from ui.config import WindowConfig

__all__ = [
    "run_bench",
    "run_host",
    "run_join",
    "run_practice",
    "run_replay",
    "run_scenario",
    "run_sim",
    "run_tables",
    "run_window",
]


def run_window(args: argparse.Namespace) -> int:
    """``nerts-lan``: the window on its menu (practice, and the LAN's lobby)."""
    window = _window_config(args, "", interface=args.interface)
    from ui import app

    return app.open_window(window)


def run_practice(args: argparse.Namespace) -> int:
    """``nerts-lan practice``: the window on a practice table; unset options are the saved ones."""
    from nerts_lan.practice import PracticeConfig
    from nerts_lan.rules.state import Options
    from ui.config import load_settings

    window = _window_config(args, "practice")
    settings = load_settings()
    with _usage_errors("practice"):
        practice = PracticeConfig(
            player=args.name or settings.player_name or "You",
            opponents=settings.opponents if args.opponents is None else args.opponents,
            level=args.level or settings.level,
            partners=bool(args.partners),
            options=options_from_args(args, Options(flip=settings.flip)),
            seed=args.seed,
        )
    from ui import app

    return app.open_practice(window, practice)


def run_replay(args: argparse.Namespace) -> int:
    """``nerts-lan replay FILE``: the match log in the window, or as JSON lines (--headless)."""
    from nerts_lan.headless import play as headless

    if args.headless:
        code = headless.run_replay(args.file)
        if args.coach:
            from nerts_lan.history.coach import coach_records

            for line in coach_records(headless.read_log(args.file)[0]):
                sys.stdout.write(json.dumps(line) + "\n")
        return code
    if args.coach:
        raise UsageError("replay", "--coach needs --headless (the window's scoreboard coaches)")
    from nerts_lan.matchlog.file import writer_of
    from nerts_lan.replay import ReplaySession

    window = _window_config(args, "replay")
    records, problem = headless.read_log(args.file)
    if not records:
        raise UsageError("replay", problem or f"{args.file} holds no records")
    with _usage_errors("replay", prefix=f"{args.file}: "):
        session = ReplaySession.from_records(records, problem, writer_of(Path(args.file), records))
    if session.notice is not None:
        sys.stderr.write(UsageError("replay", session.notice).line() + "\n")
    from ui import app

    code = app.open_replay(window, session)
    return 1 if code == 0 and session.notice is not None else code


def run_host(args: argparse.Namespace) -> int:
    """``nerts-lan host --headless``: host a table and print its events as JSON lines."""
    from nerts_lan.headless import play as headless
    from nerts_lan.table.commands import TableSettings

    _require_headless(args, "host")
    peer = _peer_config(args, "host")
    with _usage_errors("host"):
        options = options_from_args(args)
        handicaps = handicaps_from_args(args.handicap, args.teams)
        table = TableSettings(
            args.table or f"{peer.name}'s table",
            replace(options, handicaps=handicaps),
            teams=args.teams,
            per_team=2 if args.partnership else 1,
            lost_seat=args.lost_seat,
            countdown=args.countdown,
        )
        config = headless.HostConfig(peer, table, players=args.players, private=args.private)
    return headless.host(config)


def run_join(args: argparse.Namespace) -> int:
    """``nerts-lan join --headless``: find a table, join it, print its events as JSON lines."""
    from nerts_lan.headless import play as headless

    _require_headless(args, "join")
    peer = _peer_config(args, "join")
    with _usage_errors("join"):
        config = headless.JoinConfig(peer, table=args.table, wait=args.wait, address=args.address)
    return headless.join(config)


def run_tables(args: argparse.Namespace) -> int:
    """``nerts-lan tables``: list the tables on the LAN."""
    from nerts_lan.headless import play as headless

    return headless.run_tables(args)


def run_sim(args: argparse.Namespace) -> int:
    """``nerts-lan sim``: bot-only rounds or matches in simulated time, and their summary."""
    from nerts_lan.lab import sim

    with _usage_errors("sim"):
        config = sim.SimConfig(
            teams=args.teams,
            players=args.players,
            levels=tuple(level.strip() for level in str(args.levels).split(",")),
            rounds=20 if args.rounds is None else args.rounds,
            matches=0 if args.matches is None else args.matches,
            seed=args.seed,
            options=options_from_args(args),
            delay_scale=args.bot_delay,
            max_actions=args.max_actions,
        )
        if args.matches is not None and args.matches < 1:
            raise ValueError("--matches must be at least 1")
    return sim.run(config, as_json=args.json, progress=args.progress)


def run_scenario(args: argparse.Namespace) -> int:
    """``nerts-lan scenario FILE``: replay a JSON scenario and print its result."""
    from nerts_lan.rules.actions import MalformedError
    from nerts_lan.rules.scenario import parse_scenario_text, run_scenario

    try:
        if args.file == "-":
            text = sys.stdin.buffer.read().decode("utf-8")
        else:
            with open(args.file, "rb") as handle:
                text = handle.read().decode("utf-8")
        result = run_scenario(parse_scenario_text(text))
    except OSError as error:
        raise UsageError(
            "scenario", f"cannot read {args.file}: {error.strerror or error}"
        ) from None
    except UnicodeDecodeError:
        raise UsageError("scenario", f"{args.file} is not UTF-8 text") from None
    except MalformedError as error:
        raise UsageError("scenario", str(error)) from None
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


def run_bench(args: argparse.Namespace) -> int:
    """``nerts-lan bench``: measure and print JSON figures."""
    from nerts_lan.lab.bench import run_benchmarks

    figures = run_benchmarks(quick=args.quick, only=args.only)
    sys.stdout.write(json.dumps(figures, indent=2) + "\n")
    return 0


# --- private helpers ------------------------------------------------------------------------


@contextmanager
def _usage_errors(command: str, prefix: str = "") -> Iterator[None]:
    """Turn a config's ``ValueError`` (it names the bad option) into the command's usage error."""
    try:
        yield
    except ValueError as error:
        raise UsageError(command, f"{prefix}{error}") from None


def _window_config(
    args: argparse.Namespace, command: str, interface: str | None = None
) -> WindowConfig:
    from ui.config import WindowConfig

    with _usage_errors(command):
        return WindowConfig(args.width, args.height, args.fullscreen, interface, args.readout)


def _peer_config(args: argparse.Namespace, command: str) -> PeerConfig:
    from nerts_lan.headless.play import PeerConfig

    with _usage_errors(command):
        return PeerConfig(
            name=args.name or _login_name(),
            interface=args.interface,
            bot=args.bot,
            bot_delay=args.bot_delay,
            team=args.team,
            rounds=args.rounds,
            code=args.code,
            peer_id=args.peer_id,
            verbose=args.verbose,
            timeout=args.timeout,
        )


def _login_name() -> str:
    """Who is logged in, as each OS says it (USERNAME on Windows), or "player"."""
    for variable in ("USER", "USERNAME", "LOGNAME"):
        name = os.environ.get(variable, "").strip()
        if name:
            return name
    return "player"


def _require_headless(args: argparse.Namespace, command: str) -> None:
    if not args.headless:
        raise UsageError(
            command,
            f"{command} needs --headless here: the window {command}s tables from its lobby "
            "(run nerts-lan with no command)",
        )
