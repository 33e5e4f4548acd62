"""``nerts-lan doctor [--interface ADDRESS] [--port PORT] [--json]``: the checks a player runs
when friends cannot see each other's tables (``nerts_lan.doctor.checkup``), as text or as one JSON
object; ``--listen`` on one laptop and ``--probe HOST[:PORT]`` on another check between the two
(``nerts_lan.doctor.link``: a laptop cannot test its own firewall from itself).

Exit status 0 when every check passed, 1 when one failed. The parser part loads nothing of the
network; the checks load when the command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import sys
from typing import Any

from nerts_lan.usage import UsageError

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
    between = parser.add_mutually_exclusive_group()
    between.add_argument(
        "--listen",
        action="store_true",
        help="listen here (the game's TCP port and UDP, and an mDNS advert) for --probe from "
        "another laptop, until Ctrl+C or --timeout",
    )
    between.add_argument(
        "--probe",
        default=None,
        metavar="HOST[:PORT]",
        help="check that the laptop at HOST, running doctor --listen, is reachable from here",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --listen: stop after so many seconds (default: at Ctrl+C)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object (--listen: one per line)"
    )
    parser.set_defaults(command="doctor", run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    """Run the checks and print what they found; 0 when all passed, else 1."""
    from nerts_lan.doctor.checkup import diagnose

    if args.interface is not None:
        try:
            ipaddress.IPv4Address(args.interface)
        except ValueError:
            raise UsageError(
                "doctor", f"--interface {args.interface!r} is not an IPv4 address"
            ) from None
    if not 0 <= args.port <= 65535:
        raise UsageError("doctor", "--port must be from 0 to 65535")
    if args.timeout is not None and not (args.listen and 0 < args.timeout <= 86400):
        raise UsageError("doctor", "--timeout goes with --listen, from 0 to 86400 seconds")
    if args.listen:
        return _listen(args)
    if args.probe is not None:
        return _probe(args)
    diagnosis = diagnose(args.interface, args.port)
    if args.json:
        sys.stdout.write(json.dumps(diagnosis.to_json()) + "\n")
    else:
        sys.stdout.write(diagnosis.report())
    return 0 if diagnosis.ok else 1


def _listen(args: argparse.Namespace) -> int:
    from nerts_lan.doctor.checkup import find_interfaces
    from nerts_lan.doctor.link import async_listen, listen_line
    from nerts_lan.lan.advert import DEFAULT_PORT

    _, _, used = find_interfaces(args.interface)
    if used is None:
        raise UsageError("doctor", "no network to listen on: see nerts-lan doctor")

    def say(record: dict[str, Any]) -> None:
        line = json.dumps(record) if args.json else listen_line(record)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    try:
        return asyncio.run(async_listen(used.address, args.port or DEFAULT_PORT, args.timeout, say))
    except KeyboardInterrupt:
        return 0  # Ctrl+C is how a listener stops


def _probe(args: argparse.Namespace) -> int:
    from nerts_lan.doctor.checkup import find_interfaces
    from nerts_lan.doctor.link import async_probe
    from nerts_lan.lan.by_address import AddressError, parse_address

    try:
        host, port = parse_address(args.probe)
    except AddressError as error:
        raise UsageError("doctor", f"--probe: {error}") from None
    _, _, used = find_interfaces(args.interface)  # where to browse for its advert
    report = asyncio.run(async_probe(host, port, used.address if used else None))
    if args.json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
    else:
        sys.stdout.write(report.report())
    return 0 if report.ok else 1
