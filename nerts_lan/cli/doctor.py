"""``nerts-lan doctor [--interface ADDRESS] [--port PORT] [--json]``: the checks a player runs
when friends cannot see each other's tables (``nerts_lan.doctor``), as text or as one JSON object.

Exit status 0 when every check passed, 1 when one failed. The parser part loads nothing of the
network; the checks load when the command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
from typing import Any

from ..usage import UsageError

__all__ = ["register", "run_doctor"]


def register(subcommands: Any) -> None:
    """Add the ``doctor`` subcommand to the ``nerts-lan`` parser."""
    parser = subcommands.add_parser(
        "doctor",
        help="check why tables do not show up: network, mDNS, the game's port, folders",
        description=(
            "Lists this computer's networks and the one the game uses, then checks that an "
            "mDNS query on it comes back, that the game's TCP port accepts connections, and "
            "that the data and config folders can be written, and says what to do. Exit status "
            "0 when all is well, 1 when a check failed."
        ),
    )
    parser.add_argument(
        "--interface",
        default=None,
        metavar="ADDRESS",
        help="check this IPv4 address's network (default: the one the window would use)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        metavar="PORT",
        help="the TCP port to check (default: a free one, and the port of a table hosted here)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(command="doctor", run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    """Run the checks and print what they found; 0 when all passed, else 1."""
    from ..doctor import diagnose

    if args.interface is not None:
        try:
            ipaddress.IPv4Address(args.interface)
        except ValueError:
            raise UsageError(
                "doctor", f"--interface {args.interface!r} is not an IPv4 address"
            ) from None
    if not 0 <= args.port <= 65535:
        raise UsageError("doctor", "--port must be from 0 to 65535")
    diagnosis = diagnose(args.interface, args.port)
    if args.json:
        sys.stdout.write(json.dumps(diagnosis.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(diagnosis.report())
    return 0 if diagnosis.ok else 1
