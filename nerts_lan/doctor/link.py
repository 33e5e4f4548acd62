"""``nerts-lan doctor --listen`` and ``--probe``: the check between two laptops.

A laptop cannot test its own firewall from itself: what it sends to its own address is looped
back and never filtered. So one laptop listens (``Listener``: the game's TCP port and the same
UDP port on one address, and an mDNS probe advert there) and the other probes it
(``async_probe``): the TCP port accepts and answers, a UDP datagram gets an answer, the advert is
found by browsing. Each failure says what is blocked and where, and ``probe_advice`` the setting
to change.

The protocol is small and every byte of it is hostile input: a prober sends one line
``nerts-lan doctor probe TOKEN`` (TOKEN: 16 hex digits) by TCP and by UDP, and the listener answers
``nerts-lan doctor answer TOKEN``; reads are bounded (``MAX_LINE`` bytes) and timed out, and
anything else is a stranger's (reported as such, in one line, never answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import re
import secrets
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, cast

from nerts_lan.doctor.checks import Check
from nerts_lan.doctor.checkup import PROBE_TYPE, Connector, tcp_verdict
from net import CONNECT, Advert, Discovery, record, udp_socket

__all__ = [
    "AT_ONCE",
    "MAX_LINE",
    "PROBE_MDNS_WAIT",
    "PROBE_TCP_WAIT",
    "PROBE_UDP_WAIT",
    "Heard",
    "Listener",
    "ProbeReport",
    "async_probe",
    "probe_advice",
]

MAX_LINE: Final = 64
"""Longest line either side reads; a longer one is a stranger's."""
PROBE_TCP_WAIT: Final = 5.0
"""Seconds a TCP connect may take before the port is said to be dropped: longer than Windows
takes to refuse a closed port (about 2 s, as it retries the SYN), so a refusal is not taken for
a firewall's silence."""
PROBE_UDP_WAIT: Final = 3.0
"""Seconds to wait for the UDP answer (the probe is sent three times meanwhile)."""
PROBE_MDNS_WAIT: Final = 4.0
"""Seconds to browse for the listener's mDNS advert."""
AT_ONCE: Final = 16
"""Connections a listener serves at once; more are closed unread (a flood)."""
STRANGERS_SHOWN: Final = 20
"""Strangers reported by a listener; more are counted, not shown."""
_PROBE = re.compile(rb"nerts-lan doctor probe ([0-9a-f]{16})\n?")
_ANSWER = b"nerts-lan doctor answer "
_SETTINGS = (
    "On that laptop, let nerts-lan in: on Windows, Settings → Network & Internet → Wi-Fi → "
    "(the network) → Network profile type: Private, and Windows Security → Firewall & network "
    "protection → Allow an app through firewall → python.exe (tick Private); on macOS, System "
    "Settings → Network → Firewall → Options → allow Python; on Linux, allow the port (for "
    "example: sudo ufw allow {port})."
)


@dataclass(frozen=True)
class Heard:
    """What a listener heard: a ``probe`` (by ``how``: tcp or udp) or a ``stranger``'s bytes."""

    event: str
    how: str
    source: str
    detail: str = ""

    def line(self) -> str:
        if self.event == "probe":
            return f"{self.how.upper()} probe from {self.source}: answered"
        return f"a stranger on {self.how.upper()} from {self.source}: {self.detail} (ignored)"

    def to_json(self) -> dict[str, str]:
        return {"event": self.event, "how": self.how, "source": self.source, "detail": self.detail}


class Listener:
    """The listening side: TCP and UDP on ``address:port`` and an mDNS advert there; what it
    hears goes to ``on_heard``."""

    def __init__(self, address: str, port: int, on_heard: Callable[[Heard], None]) -> None:
        self.address = address
        self.port = port
        self.strangers = 0
        self._serving = 0
        self._on_heard = on_heard
        self._server: asyncio.Server | None = None
        self._udp: asyncio.DatagramTransport | None = None
        self._discovery: Discovery | None = None

    async def async_start(self) -> None:
        """Listen (``OSError`` if the port is taken or the address is not ours) and advertise."""
        loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(
            self._serve, self.address, self.port, limit=4 * MAX_LINE
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._udp, _ = await loop.create_datagram_endpoint(
            lambda: _ProbeAnswerer(self), sock=udp_socket(self.address, self.port)
        )
        self._discovery = Discovery(self.address)
        name = "nerts-lan doctor --listen"
        advert = Advert(PROBE_TYPE, secrets.token_hex(6), name, self.port, {}, (self.address,))
        await self._discovery.async_publish(advert)

    async def async_close(self) -> None:
        if self._udp is not None:
            self._udp.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        if self._discovery is not None:
            await self._discovery.async_close()

    def heard(self, heard: Heard) -> None:
        if heard.event == "stranger":
            self.strangers += 1
            if self.strangers > STRANGERS_SHOWN:
                return
        self._on_heard(heard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        source = str(peer[0]) if isinstance(peer, tuple) else "?"
        if self._serving >= AT_ONCE:  # a flood: no descriptor and no timer more for it
            writer.close()
            self.heard(Heard("stranger", "tcp", source, f"over {AT_ONCE} connections at once"))
            return
        self._serving += 1
        try:
            await self._answer(reader, writer, source)
        finally:
            self._serving -= 1

    async def _answer(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, source: str
    ) -> None:
        try:
            line = await asyncio.wait_for(reader.readuntil(b"\n"), PROBE_TCP_WAIT)
        except asyncio.IncompleteReadError as short:
            line = short.partial
        except (asyncio.LimitOverrunError, ValueError):
            line = None  # a line longer than any probe's
        except (asyncio.TimeoutError, OSError):
            line = b""
        try:
            answer = None if line is None else answer_to(line)
            if answer is None:
                said = f"over {MAX_LINE} bytes" if line is None else stranger_bytes(line)
                self.heard(Heard("stranger", "tcp", source, said))
            else:
                self.heard(Heard("probe", "tcp", source))
                writer.write(answer)
                with contextlib.suppress(OSError, asyncio.TimeoutError):
                    await asyncio.wait_for(writer.drain(), 1.0)
        finally:
            writer.close()


def answer_to(line: bytes) -> bytes | None:
    """The answer to a probe's line, or None if ``line`` is not one."""
    if len(line) > MAX_LINE:
        return None
    probe = _PROBE.fullmatch(line)
    return None if probe is None else _ANSWER + probe.group(1) + b"\n"


def stranger_bytes(data: bytes) -> str:
    """A stranger's bytes in words: how many, and the first few, escaped."""
    if not data:
        return "nothing sent"
    shown = repr(data[:24])[2:-1]
    if len(shown) > 40 or len(data) > 24:
        shown = shown[:40] + "…"
    return f"{len(data)}{'+' if len(data) > MAX_LINE else ''} bytes: {shown}"


class _ProbeAnswerer(asyncio.DatagramProtocol):
    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self._transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: Any) -> None:
        source = str(addr[0]) if isinstance(addr, tuple) else "?"
        answer = answer_to(data)
        if answer is None or self._transport is None:
            self._listener.heard(Heard("stranger", "udp", source, stranger_bytes(data)))
            return
        self._listener.heard(Heard("probe", "udp", source))
        self._transport.sendto(answer, addr)  # no bigger than the probe: nothing to amplify

    def error_received(self, exc: Exception) -> None:
        pass  # a prober gone before the answer: nothing to do


# --- the probing side -----------------------------------------------------------------------


@dataclass
class ProbeReport:
    """What ``--probe`` found about ``host:port``."""

    host: str
    port: int
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "host": self.host,
            "port": self.port,
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
            "advice": probe_advice(self),
        }

    def report(self) -> str:
        lines = [f"Probing the laptop at {self.host} (nerts-lan doctor --listen there):"]
        lines += [f"  {'ok  ' if c.ok else 'FAIL'}  {c.name}: {c.detail}" for c in self.checks]
        lines += ["", "What to do:"]
        for line in probe_advice(self):
            lines += textwrap.wrap(line, 96, initial_indent="  - ", subsequent_indent="    ")
        return "\n".join(lines) + "\n"


async def async_probe(
    host: str, port: int, interface: str | None, connect: Connector | None = None
) -> ProbeReport:
    """Probe the listener at ``host:port`` by TCP and UDP, and browse for its advert on
    ``interface`` (an address of ours; None: every interface), all at once."""
    token = secrets.token_hex(8).encode()
    tcp, udp, mdns = await asyncio.gather(
        _tcp_probe(host, port, token, connect or asyncio.open_connection),
        _udp_probe(host, port, token),
        _mdns_probe(host, interface),
    )
    return ProbeReport(host, port, [tcp, udp, mdns])


def probe_advice(report: ProbeReport) -> list[str]:
    """What to do about what ``report`` found."""
    failed = {c.name for c in report.checks if not c.ok}
    if not failed:
        return [
            "All is well between these two laptops: tables hosted on either show up on the "
            "other. If one still does not, its table may be on another network (the lobby's "
            "network button)."
        ]
    advice: list[str] = []
    tcp = next((c for c in report.checks if c.name == "tcp"), None)
    if tcp is not None and not tcp.ok and "refused" in tcp.detail:
        advice.append(
            f"Start nerts-lan doctor --listen --port {report.port} on the laptop at "
            f"{report.host} first (or its firewall refuses the port)."
        )
    if any(not c.ok and "firewall" in c.detail for c in report.checks):
        advice.append(_SETTINGS.format(port=report.port))
    if "mdns" in failed:
        advice.append(
            "Tables will not show up by themselves between these laptops: join by address "
            f"(the host's lobby shows it; nerts-lan join --address {report.host}:PORT)."
        )
    return advice


async def _tcp_probe(host: str, port: int, token: bytes, connect: Connector) -> Check:
    where = f"TCP port {port} at {host}"
    verdict, found = await tcp_verdict(host, port, connect)
    if verdict == "dropped":
        return Check(
            "tcp",
            False,
            f"{where}: no answer in {PROBE_TCP_WAIT:.0f} s: the other laptop's firewall drops "
            f"TCP {port} (or it is not on this network)",
        )
    if verdict == "refused":
        return Check(
            "tcp", False, f"{where}: refused: nothing listens there, or its firewall refuses it"
        )
    if verdict == "error":
        return Check("tcp", False, f"{where}: cannot connect: {found.strerror or found}")
    reader, writer = found
    try:
        writer.write(b"nerts-lan doctor probe " + token + b"\n")
        line = await asyncio.wait_for(reader.readline(), PROBE_TCP_WAIT)
    except (OSError, asyncio.TimeoutError, ValueError):
        line = b""
    finally:
        writer.close()
    if line[:MAX_LINE] != _ANSWER + token + b"\n":
        return Check("tcp", False, f"{where}: something else answers (not nerts-lan doctor)")
    return Check("tcp", True, f"{where} accepts connections from here")


async def _udp_probe(host: str, port: int, token: bytes) -> Check:
    where = f"UDP port {port} at {host}"
    loop = asyncio.get_running_loop()
    answered = loop.create_future()
    expected = _ANSWER + token + b"\n"

    class Asker(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: Any) -> None:
            if data == expected and not answered.done():
                answered.set_result(True)

        def error_received(self, exc: Exception) -> None:
            # An ICMP "port unreachable": nobody listens (Windows reports it as a reset).
            if isinstance(exc, (ConnectionRefusedError, ConnectionResetError)):
                if not answered.done():
                    answered.set_result(False)
            elif isinstance(exc, OSError):
                record(CONNECT, exc, host)  # macOS' Local Network privacy says no this way

    try:
        transport, _ = await loop.create_datagram_endpoint(Asker, remote_addr=(host, port))
    except OSError as error:
        return Check("udp", False, f"{where}: cannot send: {error.strerror or error}")
    try:
        for _ in range(3):  # a datagram may be lost: three tries within the wait
            transport.sendto(b"nerts-lan doctor probe " + token + b"\n")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(answered), PROBE_UDP_WAIT / 3)
            if answered.done() and answered.result():
                return Check("udp", True, f"{where} answers from here")
            if answered.done():
                return Check("udp", False, f"{where}: refused: nothing listens there")
    finally:
        transport.close()
    return Check(
        "udp",
        False,
        f"{where}: no answer in {PROBE_UDP_WAIT:.0f} s: the other laptop's firewall drops UDP "
        f"{port} (the game then runs on TCP alone, slower after a loss)",
    )


async def _mdns_probe(host: str, interface: str | None) -> Check:
    found = asyncio.Event()

    def on_probe(name: str, advert: Advert | None) -> None:
        if advert is not None and host in advert.addresses:
            found.set()

    browser = Discovery(interface)
    try:
        browser.browse(PROBE_TYPE, on_probe)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(found.wait(), PROBE_MDNS_WAIT)
    finally:
        await browser.async_close()
    if found.is_set():
        return Check("mdns", True, f"the advert of {host} was found by browsing")
    return Check(
        "mdns",
        False,
        f"the advert of {host} was not found in {PROBE_MDNS_WAIT:.0f} s: multicast between "
        "the two laptops is blocked (a firewall on either drops UDP 5353, or the Wi-Fi keeps "
        "its devices apart)",
    )


# --- the command's two modes ----------------------------------------------------------------


async def async_listen(
    address: str, port: int, timeout: float | None, say: Callable[[dict[str, Any]], None]
) -> int:
    """``doctor --listen``: listen on ``address:port`` until ``timeout`` seconds (None: until
    Ctrl+C), telling ``say`` each event ("listening", "probe", "stranger", "done"); the exit
    status (1: could not listen)."""
    listener = Listener(address, port, lambda heard: say(heard.to_json()))
    try:
        await listener.async_start()
    except OSError as error:
        await listener.async_close()
        say({"event": "error", "detail": _listen_problem(address, port, error)})
        return 1
    say({"event": "listening", "address": address, "port": listener.port})
    try:
        await asyncio.sleep(timeout if timeout is not None else 365 * 86400.0)
    finally:
        await listener.async_close()
        say({"event": "done", "strangers": listener.strangers})
    return 0


def listen_line(record: dict[str, Any]) -> str:
    """A listener's event in words."""
    event = record["event"]
    if event == "listening":
        where = f"{record['address']}:{record['port']}"
        return (
            f"Listening on TCP and UDP {where}, and advertising it over mDNS.\n"
            f"On the other laptop, run:  nerts-lan doctor --probe {where}\n"
            "Each probe that gets here is shown below; Ctrl+C to stop."
        )
    if event in ("probe", "stranger"):
        return Heard(event, record["how"], record["source"], record["detail"]).line()
    if event == "done":
        more = record["strangers"] - STRANGERS_SHOWN
        return f"Stopped ({more} more strangers not shown)." if more > 0 else "Stopped."
    return str(record.get("detail", record))


def _listen_problem(address: str, port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {address} is taken (a table hosted here, or another program): "
            "close it, or pick another with --port PORT"
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return f"{address} is not an address of this computer"
    return f"cannot listen on {address} port {port}: {error.strerror or error}"
