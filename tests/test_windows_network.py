"""What the doctor and the window make of Windows' network profile and firewall rules, read from
recorded outputs of PowerShell and netsh (tests/platform_outputs: this machine cannot run them),
and of commands that are missing or fail (as under Wine)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nerts_lan.doctor import blocks as network_blocks
from nerts_lan.doctor.blocks import platform_findings
from nerts_lan.doctor.windows import (
    BlockRule,
    WindowsFindings,
    parse_netsh_rules,
    parse_profiles,
    parse_rules,
    read_findings,
)

OUTPUTS = Path(__file__).parent / "platform_outputs"
PYTHON = r"C:\Users\Ada\AppData\Local\Programs\Python\Python313\python.exe"
ENV = {"LocalAppData": r"C:\Users\Ada\AppData\Local"}


def _output(name: str) -> str:
    return (OUTPUTS / name).read_text(encoding="utf-8")


def test_a_public_wifi_is_found_in_windows_powershells_own_json() -> None:
    [profile] = parse_profiles(_output("profiles_ps51.json"))
    assert (profile.name, profile.interface, profile.category) == (
        "Cafe Lumiere Guest",
        "Wi-Fi",
        "Public",
    )
    found = WindowsFindings(profiles=[profile], rules=[])
    [problem] = found.problems()
    assert problem.endswith(
        "Settings → Network & Internet → Wi-Fi → Cafe Lumiere Guest → Network profile type: "
        "Private."
    )


def test_the_doctors_command_output_names_the_public_one_of_two() -> None:
    profiles = parse_profiles(_output("profiles_select.json"))
    assert [(p.name, p.category) for p in profiles] == [
        ("HomeNet 5G", "Private"),
        ("Network 3", "Public"),
    ]
    [line] = WindowsFindings(profiles=profiles, rules=[]).window_lines()
    assert (
        '"Network 3"' in line and "→ Ethernet → Network 3 → Network profile type: Private" in line
    )


def test_block_rules_for_this_python_are_found_and_the_others_left_out() -> None:
    rules = parse_rules(_output("rules_select.json"), [PYTHON], ENV)
    # The enabled inbound blocks (one path written with %LOCALAPPDATA%); not the allow rule,
    # the disabled one or the outbound one.
    assert rules == [
        BlockRule("Python", PYTHON, ("Public",)),
        BlockRule("Python", r"%LOCALAPPDATA%\Programs\Python\Python313\python.exe", ("Public",)),
    ]
    assert parse_rules(_output("rules_select.json"), [r"C:\Python310\python.exe"], ENV) == []
    [numbers] = parse_rules(_output("rules_ps51_numbers.json"), [PYTHON], ENV)
    assert numbers.profiles == ("Public",) and numbers.name == "python.exe"
    text = " ".join(WindowsFindings(profiles=[], rules=rules).problems())
    assert (
        "Windows Security → Firewall & network protection → Allow an app through firewall" in text
    )
    assert "python.exe" in text


def test_netsh_gives_the_same_block_rules() -> None:
    rules = parse_netsh_rules(_output("netsh_rules_verbose.txt"), [PYTHON], ENV)
    assert [(r.name, r.profiles) for r in rules] == [
        ("python.exe", ("Public",)),
        ("python.exe", ("Public",)),
    ]
    with pytest.raises(ValueError, match="not in English"):
        parse_netsh_rules("Nom de la règle:  python.exe\n", [PYTHON], ENV)


@pytest.mark.parametrize(
    "text", ["{", '"Public"', '[{"Name": "x", "NetworkCategory": 7}]', "[1, 2]"]
)
def test_output_that_is_not_what_was_asked_is_an_error_naming_it(text: str) -> None:
    with pytest.raises(ValueError):
        parse_profiles(text)


def test_no_powershell_and_no_netsh_say_they_could_not_be_read() -> None:
    def missing(command: list[str]) -> str:
        raise FileNotFoundError(2, "No such file", command[0])

    found = read_findings(missing)
    assert found.profiles is None and found.rules is None
    summary = found.summary()
    assert summary["profiles"] == "could not be read (no powershell here)"
    assert summary["rules"] == "could not be read (no powershell here; netsh: no netsh here)"
    checks = platform_findings("win32", [], lambda: found).checks
    assert [(c.name, c.ok) for c in checks] == [
        ("windows network profile", True),
        ("windows firewall", True),
    ]
    assert "could not be read" in checks[0].detail


def test_a_powershell_that_hangs_or_fails_falls_back_to_netsh() -> None:
    asked: list[str] = []

    def run(command: list[str]) -> str:
        asked.append(command[0])
        if command[0] == "powershell":
            if "NetConnectionProfile" in command[-1]:
                raise subprocess.TimeoutExpired(command, 8)
            raise subprocess.CalledProcessError(1, command)
        return _output("netsh_rules_verbose.txt")

    found = read_findings(run)
    assert asked == ["powershell", "powershell", "netsh"]
    assert found.unread == {"profiles": "no answer in 8 s"}
    assert found.rules == []  # read by netsh: none of the recorded is for this Python


def test_the_doctor_fails_on_a_public_network_and_a_block_rule_and_says_where() -> None:
    found = WindowsFindings(
        profiles=parse_profiles(_output("profiles_ps51.json")),
        rules=parse_rules(_output("rules_select.json"), [PYTHON], ENV),
    )
    system = platform_findings("win32", [], lambda: found)
    assert [(c.name, c.ok) for c in system.checks] == [
        ("windows network profile", False),
        ("windows firewall", False),
    ]
    assert "Cafe Lumiere Guest (Wi-Fi): Public" in system.checks[0].detail
    assert "2 rule(s) block this Python" in system.checks[1].detail
    assert len(system.advice) == 3
    assert platform_findings("linux", [], lambda: found).checks == []


def test_the_window_says_what_windows_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    found = WindowsFindings(profiles=parse_profiles(_output("profiles_ps51.json")), rules=[])
    monkeypatch.setattr(network_blocks, "PLATFORM", "win32")
    monkeypatch.setattr(network_blocks, "_WINDOWS", network_blocks._WindowsRead())
    monkeypatch.setattr(network_blocks, "read_windows", lambda: found)
    from tests.waiting import until

    until(lambda: network_blocks.network_warning() != "", 10, what="the findings to be read")
    assert network_blocks.network_warning().startswith(
        'Windows blocks other laptops on the Public network "Cafe Lumiere Guest"'
    )


def test_a_powershell_that_prints_nothing_is_no_answer_not_no_network() -> None:
    """Wine's powershell.exe is a stub that prints nothing and exits 0."""

    def stub(command: list[str]) -> str:
        if command[0] == "netsh":
            raise FileNotFoundError(2, "No such file", "netsh")
        return ""

    found = read_findings(stub)
    assert found.profiles is None and found.rules is None
    assert found.summary()["profiles"] == "could not be read (PowerShell gave no answer)"


def test_the_scripts_answers_are_read_up_to_their_last_line() -> None:
    profiles = _output("profiles_select.json")

    def windows(command: list[str]) -> str:
        if "NetConnectionProfile" in command[-1]:
            return profiles + "#nerts-lan: done\r\n"
        return "#nerts-lan: done\r\n"  # no rule for this Python: ConvertTo-Json says nothing

    found = read_findings(windows)
    assert found.unread == {} and found.rules == []
    assert [p.category for p in found.profiles or []] == ["Private", "Public"]
