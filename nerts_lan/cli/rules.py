"""The table's rule options (``--flip --caller-bonus --target --kings --pile --work``), defined
once for ``host``, ``practice`` and ``sim``."""

from __future__ import annotations

import argparse

from nerts_lan.rules.state import Options

__all__ = ["add_rule_options", "options_from_args"]


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
