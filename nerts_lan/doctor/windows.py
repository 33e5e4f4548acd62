"""What Windows does to the game's traffic: the network profile (a network marked Public drops
everything other laptops send) and the firewall rules that block this Python.

Read from PowerShell (``Get-NetConnectionProfile``; ``Get-NetFirewallApplicationFilter`` piped to
``Get-NetFirewallRule``), else from ``netsh advfirewall firewall show rule name=all verbose``,
each within a few seconds; anything that cannot be read (no PowerShell, as under Wine; a
timeout; output in another language) is said to be unread, never raised. The parsing and the
decisions are pure functions of those outputs (tested with recorded ones); ``read_findings``
is the thin part that runs the commands.

``ConvertTo-Json`` in Windows PowerShell 5.1 writes enums as numbers (NetworkCategory 0 Public,
1 Private, 2 DomainAuthenticated; Enabled 1 True; Direction 1 Inbound; Action 4 Block; Profile
flags 1 Domain, 2 Private, 4 Public, 0 Any); the commands here turn them into their names
first, and the parsers take either.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "COMMAND_TIMEOUT",
    "BlockRule",
    "NetworkProfile",
    "WindowsFindings",
    "parse_netsh_rules",
    "parse_profiles",
    "parse_rules",
    "programs_of_this_python",
    "read_findings",
]

COMMAND_TIMEOUT: Final = 8.0
"""Seconds each command may take (PowerShell itself takes one or two to start)."""
_CATEGORIES: Final = {0: "Public", 1: "Private", 2: "DomainAuthenticated"}
_PROFILE_FLAGS: Final = ((1, "Domain"), (2, "Private"), (4, "Public"))
_DONE: Final = "#nerts-lan: done"
"""The line each script ends with: an output without it is no answer (Wine's PowerShell is a stub
that prints nothing, which would read as "no network, no rule")."""
_PROFILES_SCRIPT: Final = (
    "Get-NetConnectionProfile | Select-Object Name, InterfaceAlias, "
    "@{n='NetworkCategory';e={[string]$_.NetworkCategory}} | ConvertTo-Json -Compress; "
    f"'{_DONE}'"
)
_RULES_SCRIPT: Final = (
    "Get-NetFirewallApplicationFilter -Program {programs} -ErrorAction SilentlyContinue | "
    "Get-NetFirewallRule | Select-Object DisplayName, "
    "@{{n='Enabled';e={{[string]$_.Enabled}}}}, @{{n='Direction';e={{[string]$_.Direction}}}}, "
    "@{{n='Action';e={{[string]$_.Action}}}}, @{{n='Profile';e={{[string]$_.Profile}}}}, "
    "@{{n='Program';e={{($_ | Get-NetFirewallApplicationFilter).Program}}}} | "
    f"ConvertTo-Json -Compress; '{_DONE}'"
)


@dataclass(frozen=True)
class NetworkProfile:
    """A connected network as Windows classifies it: ``category`` is "Public", "Private" or
    "DomainAuthenticated"."""

    name: str
    interface: str
    category: str

    @property
    def public(self) -> bool:
        return self.category == "Public"

    def setting(self) -> str:
        """Where to make it Private."""
        kind = "Ethernet" if "ethernet" in self.interface.lower() else "Wi-Fi"
        return (
            f"Settings → Network & Internet → {kind} → {self.name} → Network profile type: Private"
        )


@dataclass(frozen=True)
class BlockRule:
    """An enabled inbound firewall rule that blocks ``program`` on ``profiles``."""

    name: str
    program: str
    profiles: tuple[str, ...]
    """"Domain", "Private", "Public"; all three for a rule on any profile."""


@dataclass
class WindowsFindings:
    """What was read: the profiles and the block rules (None: not read, ``unread`` says why)."""

    profiles: list[NetworkProfile] | None = None
    rules: list[BlockRule] | None = None
    unread: dict[str, str] = field(default_factory=dict)
    """"profiles" or "rules": why it could not be read."""

    def problems(self) -> list[str]:
        """Each thing that blocks other laptops, with the setting to change (empty: none
        found)."""
        found = [
            f'Windows treats the network "{p.name}" ({p.interface}) as Public and drops what '
            f"other laptops send: {p.setting()}."
            for p in self.profiles or []
            if p.public
        ]
        for rule in self.rules or []:
            found.append(
                f'Windows Firewall blocks Python ("{rule.name}", on {"/".join(rule.profiles)} '
                f"networks: {rule.program}): Windows Security → Firewall & network protection "
                "→ Allow an app through firewall → python.exe (tick Private), and remove the "
                "blocked python.exe entries there."
            )
        return found

    def window_lines(self) -> list[str]:
        """The same, shorter, for the window's lobby."""
        lines = [
            f'Windows blocks other laptops on the Public network "{p.name}": {p.setting()}'
            for p in self.profiles or []
            if p.public
        ]
        if self.rules:
            lines.append(
                "Windows Firewall blocks Python: Windows Security → Firewall & network "
                "protection → Allow an app through firewall → python.exe (tick Private)"
            )
        return lines

    def summary(self) -> dict[str, str]:
        """One line per thing read ("profiles", "rules"), for the doctor's checks."""
        lines: dict[str, str] = {}
        if self.profiles is None:
            lines["profiles"] = f"could not be read ({self.unread.get('profiles', 'unknown')})"
        elif not self.profiles:
            lines["profiles"] = "no connected network"
        else:
            lines["profiles"] = ", ".join(
                f"{p.name} ({p.interface}): {p.category}" for p in self.profiles
            )
        if self.rules is None:
            lines["rules"] = f"could not be read ({self.unread.get('rules', 'unknown')})"
        else:
            blocked = len(self.rules)
            lines["rules"] = f"{blocked} rule(s) block this Python" if blocked else "none blocks"
        return lines


def parse_profiles(text: str) -> list[NetworkProfile]:
    """The profiles in ``Get-NetConnectionProfile | ConvertTo-Json`` (one object or a list;
    categories as names or numbers); ``ValueError`` naming what is wrong."""
    profiles = []
    for item in _json_objects(text):
        category = item.get("NetworkCategory")
        if isinstance(category, int) and not isinstance(category, bool):
            category = _CATEGORIES.get(category)
        if category not in _CATEGORIES.values():
            raise ValueError(f"unknown NetworkCategory {item.get('NetworkCategory')!r}")
        name = item.get("Name")
        alias = item.get("InterfaceAlias")
        profiles.append(
            NetworkProfile(
                name if isinstance(name, str) else "?",
                alias if isinstance(alias, str) else "?",
                str(category),
            )
        )
    return profiles


def parse_rules(text: str, programs: Iterable[str], env: Mapping[str, str]) -> list[BlockRule]:
    """The enabled inbound block rules for one of ``programs`` in the JSON of the rules script
    (the rules of ``Get-NetFirewallRule``, with their ``Program``); ``env`` expands the
    ``%VARIABLES%`` a rule's path may hold."""
    wanted = {_path_key(p, env) for p in programs}
    rules = []
    for item in _json_objects(text):
        program = item.get("Program")
        if isinstance(program, list):  # two filters on one rule: rare, take the first
            program = program[0] if program else None
        if not isinstance(program, str) or _path_key(program, env) not in wanted:
            continue
        if not (
            _is(item.get("Enabled"), "True", 1)
            and _is(item.get("Direction"), "Inbound", 1)
            and _is(item.get("Action"), "Block", 4)
        ):
            continue
        rules.append(BlockRule(str(item.get("DisplayName", "?")), program, _profiles(item)))
    return rules


def parse_netsh_rules(
    text: str, programs: Iterable[str], env: Mapping[str, str]
) -> list[BlockRule]:
    """The same from ``netsh advfirewall firewall show rule name=all verbose`` (English
    output; another language gives ``ValueError``, as its field names are translated)."""
    if "Rule Name:" not in text:
        raise ValueError("netsh's output is not in English (or lists no rule)")
    wanted = {_path_key(p, env) for p in programs}
    rules = []
    for block in text.split("Rule Name:")[1:]:
        fields = _netsh_fields("Rule Name:" + block)
        program = fields.get("Program", "")
        if _path_key(program, env) not in wanted:
            continue
        if (fields.get("Enabled"), fields.get("Direction"), fields.get("Action")) != (
            "Yes",
            "In",
            "Block",
        ):
            continue
        named = [p.strip() for p in fields.get("Profiles", "").split(",") if p.strip()]
        profiles = tuple(named) if named and named != ["Any"] else ("Domain", "Private", "Public")
        rules.append(BlockRule(fields.get("Rule Name", "?"), program, profiles))
    return rules


def programs_of_this_python() -> list[str]:
    """The executables a firewall rule for this Python names: the running one and, in a
    virtual environment, the base interpreter its launcher starts (the one that listens)."""
    found = [sys.executable, getattr(sys, "_base_executable", "")]
    return list(dict.fromkeys(p for p in found if p))


Runner = Callable[[list[str]], str]


def read_findings(run: Runner | None = None) -> WindowsFindings:
    """Read the profiles and the rules blocking this Python (on Windows; elsewhere the
    commands are missing and both are unread). ``run(command)``: its standard output, or an
    ``OSError``/``subprocess.SubprocessError``/``ValueError`` (the default runs it)."""
    runner = run or _run
    findings = WindowsFindings()
    try:
        findings.profiles = parse_profiles(_finished(runner(_powershell(_PROFILES_SCRIPT))))
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        findings.unread["profiles"] = _why(error)
    programs = programs_of_this_python()
    quoted = ",".join("'" + p.replace("'", "''") + "'" for p in programs)
    try:
        text = _finished(runner(_powershell(_RULES_SCRIPT.format(programs=quoted))))
        findings.rules = parse_rules(text, programs, os.environ)
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        try:
            netsh = ["netsh", "advfirewall", "firewall", "show", "rule", "name=all", "verbose"]
            findings.rules = parse_netsh_rules(runner(netsh), programs, os.environ)
        except (OSError, subprocess.SubprocessError, ValueError) as second:
            findings.unread["rules"] = f"{_why(error)}; netsh: {_why(second)}"
    return findings


# --- helpers ----------------------------------------------------------------------------------


def _powershell(script: str) -> list[str]:
    # Piped, PowerShell writes in the console's OEM code page unless told otherwise: a
    # network named "Café" must come out whole.
    utf8 = "[Console]::OutputEncoding = [Text.Encoding]::UTF8; "
    return ["powershell", "-NoProfile", "-NonInteractive", "-Command", utf8 + script]


def _finished(output: str) -> str:
    """A script's output without its last line, which must be ``_DONE``."""
    lines = output.strip().splitlines()
    if not lines or lines[-1].strip() != _DONE:
        raise ValueError("PowerShell gave no answer" if not lines else "PowerShell stopped early")
    return "\n".join(lines[:-1])


def _run(command: list[str]) -> str:
    done = subprocess.run(
        command,
        capture_output=True,
        timeout=COMMAND_TIMEOUT,
        check=True,
        stdin=subprocess.DEVNULL,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )
    # netsh writes in the OEM code page (Python has a codec for it on Windows only).
    encoding = "utf-8" if command[0] == "powershell" or not _has_codec("oem") else "oem"
    return done.stdout.decode(encoding, "replace") if done.stdout else ""


def _has_codec(name: str) -> bool:
    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


def _why(error: BaseException) -> str:
    if isinstance(error, FileNotFoundError):
        return f"no {error.filename or 'such program'} here"
    if isinstance(error, subprocess.TimeoutExpired):
        return f"no answer in {COMMAND_TIMEOUT:.0f} s"
    if isinstance(error, subprocess.CalledProcessError):
        return f"it failed (exit status {error.returncode})"
    return str(error) or type(error).__name__


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The objects of ConvertTo-Json's output (nothing at all: none; one: not in a list)."""
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        return []
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error}") from None
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(item, dict) for item in items):
        raise ValueError("not a list of objects")
    return items


def _is(value: object, name: str, number: int) -> bool:
    return value == name or (type(value) is int and value == number)


def _profiles(item: Mapping[str, Any]) -> tuple[str, ...]:
    value = item.get("Profile")
    if type(value) is int:
        named = tuple(n for flag, n in _PROFILE_FLAGS if value & flag)
    elif isinstance(value, str):
        named = tuple(p.strip() for p in value.split(",") if p.strip() and p.strip() != "Any")
    else:
        named = ()
    return named or ("Domain", "Private", "Public")


def _netsh_fields(block: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in block.splitlines():
        name, colon, value = line.partition(":")
        if colon and name.strip() and not name.startswith(" ") and name.strip() not in fields:
            fields[name.strip()] = value.strip()
    return fields


def _path_key(path: str, env: Mapping[str, str]) -> str:
    """A program's path as Windows compares it: variables expanded, any case, either slash."""
    values = {name.lower(): value for name, value in env.items()}
    expanded = re.sub(r"%([^%]+)%", lambda m: values.get(m.group(1).lower(), m.group(0)), path)
    return expanded.replace("/", "\\").strip().strip('"').lower()
