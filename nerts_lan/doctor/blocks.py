"""What keeps this laptop off the LAN that its own system can tell, in words for the doctor and
the window: macOS' Local Network privacy setting, recognised from the sends the system refused
(``net.refusals``), and Windows' network profile and firewall rules
(``nerts_lan.doctor.windows``).

macOS 15 refuses a program's multicast sends and its connections to LAN addresses with
``EHOSTUNREACH`` (errno 65 there) until the user allows the app that started it (the terminal,
unless it is Terminal.app) in System Settings → Privacy & Security → Local Network. Nothing else
on a Mac refuses a multicast send that way, so one such refusal is enough to name it.

``network_warning()`` is the window's one line (empty when nothing is known to block): Windows'
findings are read once, in a thread of their own, the first time it is asked.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from nerts_lan.doctor.checks import Check
from nerts_lan.doctor.windows import WindowsFindings, read_findings
from net import CONNECT, MULTICAST_SEND, Refusal, seen_refusals

__all__ = [
    "MACOS_EHOSTUNREACH",
    "PLATFORM",
    "PlatformFindings",
    "app_name",
    "local_network_denied",
    "local_network_text",
    "network_warning",
    "platform_findings",
]

MACOS_EHOSTUNREACH: Final = 65
"""``EHOSTUNREACH`` on macOS (Linux's is 113): what Local Network privacy answers a send with."""
PLATFORM = sys.platform
"""The system the words are for (the tests set another to give its error numbers meaning)."""
read_windows: Callable[[], WindowsFindings] = read_findings
"""How Windows' findings are read (the tests give recorded ones)."""
_TERMINALS: Final = {
    "Apple_Terminal": "Terminal",
    "iTerm.app": "iTerm",
    "vscode": "Visual Studio Code",
    "WarpTerminal": "Warp",
    "ghostty": "Ghostty",
}


def local_network_denied(seen: Iterable[Refusal], platform: str) -> bool:
    """Whether ``seen`` shows macOS' Local Network privacy refusing our sends: on macOS, a
    multicast send, or a connection to a LAN address, refused with ``EHOSTUNREACH``."""
    if platform != "darwin":
        return False
    for refusal in seen:
        if refusal.errno != MACOS_EHOSTUNREACH:
            continue
        if refusal.kind == MULTICAST_SEND or (refusal.kind == CONNECT and _on_lan(refusal.address)):
            return True
    return False


def app_name(env: Mapping[str, str]) -> str:
    """The app to allow: the terminal nerts-lan was started from, when it says which."""
    return _TERMINALS.get(env.get("TERM_PROGRAM", ""), "the app you start nerts-lan from")


def local_network_text(app: str) -> str:
    return (
        "macOS blocks this app from your network: System Settings → Privacy & Security → "
        f"Local Network → allow {app} (then start nerts-lan again)"
    )


@dataclass
class PlatformFindings:
    """The doctor's checks and advice for what the system blocks."""

    checks: list[Check] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)
    local_network_denied: bool = False


def platform_findings(
    platform: str, seen: Iterable[Refusal], windows: Callable[[], WindowsFindings]
) -> PlatformFindings:
    """What the system blocks, as the doctor's checks: on macOS, the Local Network setting
    (from the refusals ``seen`` during the checks); on Windows, the profile and the rules
    (``windows()`` reads them); elsewhere nothing."""
    found = PlatformFindings()
    if platform == "darwin":
        denied = local_network_denied(seen, platform)
        found.local_network_denied = denied
        if denied:
            text = local_network_text(app_name(os.environ))
            found.checks.append(Check("local network", False, "refused: " + text))
            found.advice.append(text + ". Joining by address fails the same way until then.")
        else:
            found.checks.append(Check("local network", True, "no send was refused"))
    elif platform == "win32":
        findings = windows()
        lines = findings.summary()
        public = any(p.public for p in findings.profiles or [])
        found.checks.append(Check("windows network profile", not public, lines["profiles"]))
        found.checks.append(Check("windows firewall", not findings.rules, lines["rules"]))
        found.advice += findings.problems()
    return found


def network_warning() -> str:
    """The window's line about what blocks this laptop from the LAN (empty: nothing known)."""
    if local_network_denied(seen_refusals(), PLATFORM):
        return local_network_text(app_name(os.environ))
    if PLATFORM == "win32":
        findings = _WINDOWS.findings()
        if findings is not None:
            return next(iter(findings.window_lines()), "")
    return ""


class _WindowsRead:
    """Windows' findings, read once in a thread (PowerShell takes a second or two)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started = False
        self._found: WindowsFindings | None = None

    def findings(self) -> WindowsFindings | None:
        """What was read; None until it is (the first call starts the reading)."""
        with self._lock:
            if not self._started:
                self._started = True
                threading.Thread(target=self._read, name="windows-findings", daemon=True).start()
            return self._found

    def _read(self) -> None:
        try:
            found = read_windows()
        except Exception:  # the window must never fail for what it could not read
            found = WindowsFindings(unread={"profiles": "failed", "rules": "failed"})
        with self._lock:
            self._found = found


_WINDOWS = _WindowsRead()


def _on_lan(address: str) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return parsed.is_private and not parsed.is_loopback
