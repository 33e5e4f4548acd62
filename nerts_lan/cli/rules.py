"""The table's rule options (``--flip --caller-bonus --target --kings --pile --work``), defined
once for ``host``, ``practice`` and ``sim``; and ``host``'s ``--handicap TEAM=pile:N,work:N,
score:PERCENT`` (``add_handicap_option``, ``handicaps_from_args``)."""

from __future__ import annotations

import argparse

from nerts_lan.rules.handicap import HANDICAP_FIELDS, Handicap
from nerts_lan.rules.state import BACK_COLOURS, Options

__all__ = ["add_handicap_option", "add_rule_options", "handicaps_from_args", "options_from_args"]


def add_rule_options(parser: argparse.ArgumentParser) -> None:
    """Add the rule options; each left out keeps its default (see ``options_from_args``)."""
    rules = parser.add_argument_group("table rules")
    rules.add_argument(
        "--flip", type=int, default=None, metavar="N", help="cards turned per flip, 1 or 3 (3)"
    )
    rules.add_argument(
        "--caller-bonus", type=int, default=None, metavar="N", help="the caller's bonus (0)"
    )
    rules.add_argument("--target", type=int, default=None, metavar="N", help="match target (100)")
    rules.add_argument("--kings", action="store_true", help="kings may start foundations")
    rules.add_argument("--pile", type=int, default=None, metavar="N", help="nerts pile size (13)")
    rules.add_argument("--work", type=int, default=None, metavar="N", help="work piles, 3 to 6 (4)")


def options_from_args(args: argparse.Namespace, defaults: Options | None = None) -> Options:
    """The options the rule options ask for, ``defaults`` (docs/rules.md's) for those left out;
    ``ValueError`` names a bad one."""
    base = defaults or Options()
    return Options(
        flip=base.flip if args.flip is None else args.flip,
        caller_bonus=base.caller_bonus if args.caller_bonus is None else args.caller_bonus,
        target=base.target if args.target is None else args.target,
        kings=bool(args.kings) or base.kings,
        pile=base.pile if args.pile is None else args.pile,
        work=base.work if args.work is None else args.work,
    )


def add_handicap_option(parser: argparse.ArgumentParser) -> None:
    """``--handicap TEAM=pile:N,work:N,score:PERCENT``, once per team."""
    parser.add_argument(
        "--handicap",
        action="append",
        default=None,
        metavar="TEAM=pile:N,work:N,score:PERCENT",
        help="give a team a head start (repeat per team): TEAM is its number (1-8) or colour; "
        "pile: its nerts pile (1-49), work: its work piles (3-6), score: a multiplier in whole "
        "percent (100-400), e.g. --handicap 2=pile:10,work:5,score:150",
    )


def handicaps_from_args(values: list[str] | None, teams: int) -> tuple[tuple[str, Handicap], ...]:
    """The handicaps ``--handicap`` asks for, by team name; ``ValueError`` names a bad one."""
    handicaps: dict[str, Handicap] = {}
    for value in values or ():
        team, sep, fields = value.partition("=")
        if not sep or not fields:
            raise ValueError(f"--handicap {value!r}: write TEAM=pile:N,work:N,score:PERCENT")
        name = _team(team.strip(), teams, value)
        if name in handicaps:
            raise ValueError(f"--handicap: team {name} is given twice")
        handicaps[name] = _handicap(fields, value)
    return tuple(handicaps.items())


def _team(team: str, teams: int, value: str) -> str:
    names = [colour.capitalize() for colour in BACK_COLOURS[:teams]]
    if team.isdigit() and 1 <= int(team) <= teams:
        return names[int(team) - 1]
    if team.capitalize() in names:
        return team.capitalize()
    raise ValueError(
        f"--handicap {value!r}: no team {team!r} at a table of {teams} teams "
        f"(a number from 1 to {teams} or one of {', '.join(names)})"
    )


def _handicap(fields: str, value: str) -> Handicap:
    numbers: dict[str, int] = {}
    for part in fields.split(","):
        field, sep, number = part.strip().partition(":")
        if field not in HANDICAP_FIELDS or not sep:
            raise ValueError(
                f"--handicap {value!r}: {part.strip()!r} is not one of pile:N, work:N, "
                "score:PERCENT"
            )
        if field in numbers:
            raise ValueError(f"--handicap {value!r}: {field} is given twice")
        if not number.strip().isdigit():
            raise ValueError(f"--handicap {value!r}: {field} must be a whole number")
        numbers[field] = int(number)
    try:
        return Handicap(**numbers)
    except ValueError as error:
        raise ValueError(f"--handicap {value!r}: {error}") from None
