"""``nerts-lan stats``: the match history of this laptop, per player and per opponent.

It first records every match log that is new or grew since the last time (``history.update``);
``--import`` reads every log of the logs folder again. A history that is locked or cannot be
opened is one line on standard error and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys

from nerts_lan.folders import data_folder
from nerts_lan.history.stats import local_players, player_stats, stats_text
from nerts_lan.history.store import History, HistoryUnavailable, open_history

__all__ = ["add_stats_options", "run_stats"]


def add_stats_options(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "The history of the matches played on this laptop (recorded from the match logs of the "
        "data folder): per player name and per opponent, matches and rounds played and won, "
        "average score per round, Nerts calls, fastest round won, races won and lost, cards "
        "per minute. --json prints one JSON object per player, with a point per match."
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per player")
    parser.add_argument(
        "--import",
        dest="reimport",
        action="store_true",
        help="read every match log of the logs folder again (new ones are always read)",
    )
    parser.add_argument(
        "--player", default=None, help="only this player (default: everyone who played here)"
    )


def run_stats(args: argparse.Namespace) -> int:
    """Record the new logs, then print the statistics."""
    folder = data_folder()
    try:
        with open_history(folder) as history:
            if history.notice is not None:
                sys.stderr.write(f"nerts-lan stats: {history.notice}\n")
            _update(history, reimport=bool(args.reimport))
            names = [args.player] if args.player else local_players(history)
            _print(history, names, as_json=bool(args.json))
    except HistoryUnavailable as error:
        sys.stderr.write(f"nerts-lan stats: {error}\n")
        return 1
    return 0


def _update(history: History, reimport: bool) -> None:
    if reimport:
        history.forget_logs()
    imported = history.update(data_folder() / "logs")
    for problem in imported.problems:
        sys.stderr.write(f"nerts-lan stats: {problem}\n")
    if reimport:
        counts = history.counts()
        sys.stderr.write(
            f"nerts-lan stats: read {imported.logs} logs: {counts['matches']} matches, "
            f"{counts['rounds']} rounds recorded\n"
        )


def _print(history: History, names: list[str], as_json: bool) -> None:
    if not names and not as_json:
        sys.stdout.write("no match recorded yet: every match played here (practice too) counts\n")
    for name in names:
        stats = player_stats(history, name)
        if as_json:
            sys.stdout.write(json.dumps(stats.to_json()) + "\n")
        else:
            sys.stdout.write("\n".join(stats_text(stats)) + "\n")
