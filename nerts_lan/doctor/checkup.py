"""``nerts-lan doctor``: what a player runs when friends cannot see each other's tables.

It lists the interfaces and the one the game uses (``nerts_lan.lan.networks``: the remembered
choice, else the default route's, Docker, VPN and virtual bridges left out), then checks, each
within a few seconds:

- mDNS: a probe service published on that interface only is seen by a browser on it (a query
  and its answer went through the interface's multicast; the Nerts tables seen meanwhile are
  listed). A firewall or a network that drops multicast fails it.
- TCP: the game's port accepts a connection on that address (a listener of our own, and the
  port of each table hosted here). A firewall dropping or refusing the port fails it.
- the data and config folders can be written.

and ends with plain advice. ``Diagnosis.ok`` is the exit status's truth (0 when every check
passed); ``to_json`` is for scripts. Nothing here raises on a strange machine (no network, no
permission): every problem becomes a failed check that says what it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import textwrap
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from nerts_lan.doctor import blocks as network_blocks
from nerts_lan.doctor.checks import Check
from nerts_lan.folders import CONFIG_ENV, DATA_ENV, config_folder, data_folder
from nerts_lan.lan.advert import SERVICE_TYPE
from nerts_lan.lan.networks import remembered_network
from net import (
    CONNECT,
    Advert,
    Discovery,
    NetworkInterface,
    default_route_interface,
    rank_interfaces,
    read_interfaces,
    record,
    seen_refusals,
    skip_reason,
)

__all__ = [
    "MDNS_WAIT",
    "PROBE_TYPE",
    "SELF_CHECK_LIMIT",
    "TCP_WAIT",
    "Diagnosis",
    "SeenTable",
    "async_network_checks",
    "diagnose",
    "find_interfaces",
    "tcp_verdict",
]

PROBE_TYPE: Final = "_nerts-doctor._tcp.local."
"""The service type of the doctor's probe (no lobby lists it)."""
MDNS_WAIT: Final = 3.0
"""Seconds the probe may take to come back before mDNS is declared blocked."""
TABLES_WAIT: Final = 1.5
"""Seconds spent listening for Nerts tables, at least (answers come within about a second)."""
TCP_WAIT: Final = 5.0
"""Seconds a connection may take before the port is declared dropped by a firewall: longer than
Windows takes to refuse a closed port (about 2 s: it retries the SYN first), so that a refusal
is not taken for a firewall's silence."""
SELF_CHECK_LIMIT: Final = (
    "A computer cannot test its own firewall from itself (what it sends to its own address "
    "never passes the firewall): if a friend still sees nothing, run nerts-lan doctor --listen "
    "here and nerts-lan doctor --probe ADDRESS from theirs."
)
Connector = Callable[[str, int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]
MULTICAST_ADVICE: Final = (
    "Multicast (mDNS) does not get through here, so tables do not show up by themselves: "
    "join by address instead. The host's lobby shows its address and port; type them in the "
    'lobby\'s "Join by address", or run: nerts-lan join --address HOST:PORT. (If this computer '
    "has a firewall, allowing UDP port 5353 may fix the discovery.)"
)


@dataclass(frozen=True)
class SeenTable:
    """A Nerts table whose advert came in during the mDNS check."""

    name: str
    addresses: tuple[str, ...]
    port: int


@dataclass
class Diagnosis:
    """What ``diagnose`` found."""

    interfaces: list[NetworkInterface]
    """Every IPv4 address of every interface (loopback included), the default route marked."""
    usable: list[NetworkInterface]
    """The ones a table may use, best first."""
    used: NetworkInterface | None
    checks: list[Check] = field(default_factory=list)
    tables: list[SeenTable] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """One object for scripts (see docs/network.md)."""
        return {
            "ok": self.ok,
            "interface": _interface_json(self.used, self.used) if self.used else None,
            "interfaces": [_interface_json(i, self.used) for i in self.interfaces],
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
            "tables": [
                {"name": t.name, "addresses": list(t.addresses), "port": t.port}
                for t in self.tables
            ],
            "advice": list(self.advice),
        }

    def report(self) -> str:
        """The text a player reads."""
        lines = ["Networks on this computer:"]
        for interface in self.interfaces:
            lines.append("  " + _interface_line(interface, self.used))
        if not self.interfaces:
            lines.append("  (none found)")
        where = self.used.describe() if self.used else "no network"
        lines += ["", f"Checks on {where}:"]
        lines += [f"  {'ok  ' if c.ok else 'FAIL'}  {c.name}: {c.detail}" for c in self.checks]
        if self.tables:
            lines += ["", "Nerts tables seen:"]
            lines += [f"  {t.name} at {', '.join(t.addresses)} port {t.port}" for t in self.tables]
        lines += ["", "What to do:"]
        for line in self.advice:
            lines += textwrap.wrap(line, 96, initial_indent="  - ", subsequent_indent="    ")
        return "\n".join(lines) + "\n"


def diagnose(interface: str | None = None, port: int = 0) -> Diagnosis:
    """Run every check on ``interface`` (an IPv4 address; None: the one the window would use)
    with the game's TCP ``port`` (0: a free one); never raises for what the machine is like."""
    diagnosis = Diagnosis(*find_interfaces(interface))
    used = diagnosis.used
    diagnosis.checks.append(_network_check(interface, used))
    if used is not None:
        mdns, tables, tcp = _run_network_checks(used.address, port)
        diagnosis.tables = tables
        diagnosis.checks += [mdns, *tcp]
    diagnosis.checks += [_folder_check("data folder", data_folder, DATA_ENV)]
    diagnosis.checks += [_folder_check("config folder", config_folder, CONFIG_ENV)]
    system = network_blocks.platform_findings(
        network_blocks.PLATFORM, seen_refusals(), network_blocks.read_windows
    )
    diagnosis.checks += system.checks
    advice = _advice(diagnosis, interface)
    if system.local_network_denied:  # joining by address fails the same way
        advice = [line for line in advice if line != MULTICAST_ADVICE]
    diagnosis.advice = system.advice + advice
    return diagnosis


def find_interfaces(
    interface: str | None = None,
) -> tuple[list[NetworkInterface], list[NetworkInterface], NetworkInterface | None]:
    """Every interface (the default route's marked), the usable ones best first, and the one
    to check: ``interface``'s (an IPv4 address; None if it is none of ours), else the one the
    window would use."""
    found = read_interfaces()
    route = default_route_interface(found)
    interfaces = [replace(i, default_route=i.name == route) for i in found]
    usable = rank_interfaces(interfaces, route, interface or remembered_network() or None)
    if interface is not None:
        used = next((i for i in interfaces if i.address == interface), None)
    else:
        used = usable[0] if usable else None
    return interfaces, usable, used


# --- the checks -------------------------------------------------------------------------------


def _network_check(asked: str | None, used: NetworkInterface | None) -> Check:
    if asked is not None and used is None:
        return Check("network", False, f"no interface of this computer has the address {asked}")
    if used is None:
        return Check("network", False, "this computer has no network interface at all")
    if used.kind == "loopback" and asked is not None:
        return Check(
            "network",
            False,
            f"{asked} is this computer's loopback: only games on this computer reach it",
        )
    if used.kind == "loopback":
        return Check(
            "network", False, "this computer is on no network (only its loopback, 127.0.0.1)"
        )
    route = " (it has the default route)" if used.default_route else ""
    return Check("network", True, f"on {used.describe()}{route}")


def _run_network_checks(address: str, port: int) -> tuple[Check, list[SeenTable], list[Check]]:
    """The mDNS and TCP checks on ``address``, in an event loop of their own."""
    try:
        return asyncio.run(async_network_checks(address, port))
    except Exception as error:  # a machine we cannot check must not end in a traceback
        reason = _reason(error)
        return (
            Check("mdns", False, f"could not be checked: {reason}"),
            [],
            [Check("tcp", False, f"could not be checked: {reason}")],
        )


async def async_network_checks(
    address: str, port: int, connect: Connector | None = None
) -> tuple[Check, list[SeenTable], list[Check]]:
    """The mDNS check (and the tables it saw), then the TCP checks: the ``port`` (0: a free
    one) and the port of every table hosted on ``address``. ``connect(host, port)`` opens a
    connection (``asyncio.open_connection``; another for fault injection)."""
    dial = connect or asyncio.open_connection
    try:
        mdns, tables = await _mdns_check(address)
    except Exception as error:  # zeroconf could not start there (port 5353, permissions)
        mdns, tables = Check("mdns", False, f"could not be checked: {_reason(error)}"), []
    hosted = sorted({t.port for t in tables if address in t.addresses})
    tcp = [await _tcp_check(address, port, dial, listen=port not in hosted)]
    tcp += [await _tcp_check(address, p, dial, listen=False) for p in hosted if p != port]
    return mdns, tables, tcp


async def _mdns_check(address: str) -> tuple[Check, list[SeenTable]]:
    """Publish a probe on ``address`` with one zeroconf and wait for another to see it."""
    probe = Advert(PROBE_TYPE, secrets.token_hex(6), "nerts-lan doctor", 9, {}, (address,))
    seen = asyncio.Event()
    adverts: dict[str, Advert] = {}

    def on_probe(name: str, advert: Advert | None) -> None:
        if advert is not None and advert.instance_id == probe.instance_id:
            seen.set()

    def on_table(name: str, advert: Advert | None) -> None:
        if advert is None:
            adverts.pop(name, None)
        else:
            adverts[name] = advert

    started = time.monotonic()
    async with contextlib.AsyncExitStack() as closing:  # closed even if the second fails
        asker = Discovery(address)
        closing.push_async_callback(asker.async_close)
        responder = Discovery(address)
        closing.push_async_callback(responder.async_close)
        asker.browse(PROBE_TYPE, on_probe)
        asker.browse(SERVICE_TYPE, on_table)
        await responder.async_publish(probe)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(seen.wait(), MDNS_WAIT)
        took = time.monotonic() - started
        await asyncio.sleep(max(0.0, TABLES_WAIT - took))
    tables = [SeenTable(a.display_name, a.addresses, a.port) for a in adverts.values()]
    if seen.is_set():
        return Check("mdns", True, f"a query on {address} came back in {took:.1f} s"), tables
    detail = f"a query on {address} got no answer in {MDNS_WAIT:.0f} s: multicast is blocked"
    return Check("mdns", False, detail), tables


async def tcp_verdict(
    host: str, port: int, connect: Connector, wait: float = TCP_WAIT
) -> tuple[str, Any]:
    """Try to connect: ("open", (reader, writer)), ("refused", None), ("dropped", None: no
    answer within ``wait``) or ("error", the OSError)."""
    try:
        opened = await asyncio.wait_for(connect(host, port), wait)
    except asyncio.TimeoutError:
        return "dropped", None
    except ConnectionRefusedError:
        return "refused", None
    except OSError as error:
        record(CONNECT, error, host)  # macOS' Local Network privacy says no this way
        return "error", error
    return "open", opened


async def _tcp_check(address: str, port: int, connect: Connector, listen: bool) -> Check:
    """Connect to ``address:port``: to a listener of our own (``listen``), or to the table
    hosted here on that port."""
    server: asyncio.Server | None = None
    if listen:
        try:
            server = await asyncio.start_server(_hang_up, address, port)
        except OSError as error:
            return Check("tcp", False, _listen_problem(address, port, error))
        port = server.sockets[0].getsockname()[1]
    whose = "" if listen else " (the table hosted here)"
    try:
        verdict, found = await tcp_verdict(address, port, connect)
        if verdict == "open":
            found[1].close()
            with contextlib.suppress(OSError):
                await found[1].wait_closed()
    finally:
        if server is not None:
            server.close()
            await server.wait_closed()
    if verdict == "dropped":
        detail = f"TCP port {port}{whose} on {address}: no answer in {TCP_WAIT:.0f} s"
        return Check("tcp", False, detail + " (a firewall drops it)")
    if verdict == "refused":
        if not listen:  # nobody listens: that table's game has ended (its advert outlived it)
            return Check("tcp", True, f"TCP port {port}{whose} on {address}: closed, gone")
        detail = f"TCP port {port} on {address}: refused (a firewall refuses it)"
        return Check("tcp", False, detail)
    if verdict == "error":
        return Check("tcp", False, f"TCP port {port}{whose} on {address}: {_reason(found)}")
    return Check("tcp", True, f"TCP port {port}{whose} on {address} accepts connections from here")


async def _hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.close()


def _listen_problem(address: str, port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return f"TCP port {port} on {address} is taken by another program"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"{address} is not an address of this computer"
    return f"cannot listen on {address} port {port}: {_reason(error)}"


def _folder_check(name: str, folder_of: Any, variable: str) -> Check:
    """Make the folder if need be and write a file in it."""
    try:
        folder = Path(folder_of())
        folder.mkdir(parents=True, exist_ok=True)
        trial = folder / f".doctor-{os.getpid()}-{secrets.token_hex(3)}"
        trial.write_bytes(b"nerts-lan doctor\n")
        trial.unlink()
    except OSError as error:
        where = f" {error.filename}" if error.filename else ""
        return Check(name, False, f"cannot write in{where}: {_reason(error)} (see {variable})")
    return Check(name, True, f"{folder} is writable")


# --- advice -----------------------------------------------------------------------------------


def _advice(diagnosis: Diagnosis, asked: str | None) -> list[str]:
    advice: list[str] = []
    failed = {c.name for c in diagnosis.checks if not c.ok}
    usable = diagnosis.usable
    others = ", ".join(i.address for i in usable if i.kind != "loopback")
    if "network" in failed and asked is not None and diagnosis.used is not None:
        # The asked address is ours, but only this computer reaches it (the loopback).
        advice.append(
            f"{asked} is this computer's loopback: friends' laptops cannot reach a table there. "
            + (
                f"To play with them, use this computer's address on your network: {others} "
                "(nerts-lan doctor --interface ADDRESS)."
                if others
                else "Connect this computer to the same Wi-Fi (or cable network) as your friends."
            )
        )
    elif "network" in failed and asked is not None:
        addresses = ", ".join(i.address for i in usable) or "none"
        advice.append(
            f"{asked} is not an address of this computer. Its addresses: {addresses} "
            "(nerts-lan doctor --interface ADDRESS)."
        )
    elif "network" in failed:
        advice.append(
            "Connect this computer to the same Wi-Fi (or cable network) as your friends, then "
            "run nerts-lan doctor again."
        )
    if "mdns" in failed:
        advice.append(MULTICAST_ADVICE)
    blocked = [
        c for c in diagnosis.checks if c.name == "tcp" and not c.ok and "firewall" in c.detail
    ]
    advice += [_port_advice(c.detail) for c in blocked]
    for check in diagnosis.checks:
        if check.name.endswith("folder") and not check.ok:
            advice.append(
                f"nerts-lan cannot write its files ({check.name}): free some space or fix the "
                "folder's permissions, or point it at another folder with "
                f"{DATA_ENV if check.name == 'data folder' else CONFIG_ENV}=FOLDER."
            )
    if len(usable) > 1 and diagnosis.used is not None:
        others = "; ".join(i.describe() for i in usable if i != diagnosis.used)
        advice.append(
            f"This computer is on several networks: the game uses {diagnosis.used.describe()} "
            f"(others: {others}). If your friends are on another one, pick it: in the window, "
            "the lobby's network button; headless, --interface ADDRESS (and here, nerts-lan "
            "doctor --interface ADDRESS)."
        )
    if not failed:
        advice.insert(
            0,
            "All is well here. If a friend's table still does not show, run nerts-lan doctor on "
            "their computer too, or join by address (nerts-lan join --address HOST:PORT). "
            + SELF_CHECK_LIMIT,
        )
    return advice


def _port_advice(detail: str) -> str:
    port = detail.split("TCP port ", 1)[-1].split()[0] if "TCP port " in detail else "?"
    return (
        f"A firewall on this computer blocks TCP port {port}: allow incoming TCP connections "
        f"on port {port} (or allow nerts-lan, that is Python, through the firewall), or others "
        "cannot join the tables you host."
    )


# --- helpers ----------------------------------------------------------------------------------


def _interface_json(interface: NetworkInterface, used: NetworkInterface | None) -> dict[str, Any]:
    return {
        "name": interface.name,
        "label": interface.label,
        "address": interface.address,
        "prefix": interface.prefix,
        "kind": interface.kind,
        "default_route": interface.default_route,
        "skipped": skip_reason(interface),
        "used": used is not None and interface.address == used.address,
    }


def _interface_line(interface: NetworkInterface, used: NetworkInterface | None) -> str:
    mark = "→ " if used is not None and interface.address == used.address else "  "
    text = f"{mark}{interface.describe()}/{interface.prefix}"
    if interface.default_route:
        text += " (default route)"
    if mark.strip():
        return text + "  ← used"
    reason = skip_reason(interface)
    return text + (f"  skipped: {reason}" if reason else "")


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower() if error.strerror[:1].isupper() else error.strerror
    return str(error) or type(error).__name__
