"""``nerts-lan doctor`` without a network: which interface it checks, the advice it gives for
what the checks found, its text and JSON, and its usage errors (the checks themselves run in
tests/net_real/test_doctor*.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nerts_lan.doctor.checkup as doctor
from nerts_lan.cli.main import main
from nerts_lan.doctor import blocks as network_blocks
from nerts_lan.doctor.checks import Check
from nerts_lan.doctor.checkup import SeenTable, diagnose
from nerts_lan.doctor.link import answer_to, stranger_bytes
from nerts_lan.doctor.windows import NetworkProfile, WindowsFindings
from net import refusals
from net.interfaces import NetworkInterface

WIFI = NetworkInterface("wlan0", "192.168.1.20", 24)
ETHERNET = NetworkInterface("eth0", "10.0.0.7", 24)
DOCKER = NetworkInterface("docker0", "172.17.0.1", 16)
LO = NetworkInterface("lo", "127.0.0.1", 8)


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, object]:
    """A laptop with Wi-Fi (the default route), Ethernet and Docker; checks that pass unless a
    test says otherwise; what the network checks were asked in ``asked``."""
    monkeypatch.setenv("NERTS_LAN_CONFIG_DIR", str(tmp_path / "config"))
    state: dict[str, object] = {
        "interfaces": [LO, DOCKER, ETHERNET, WIFI],
        "route": "wlan0",
        "mdns": True,
        "tcp": True,
        "asked": [],
    }

    def network_checks(address: str, port: int) -> tuple[Check, list[SeenTable], list[Check]]:
        asked = state["asked"]
        assert isinstance(asked, list)
        asked.append((address, port))
        shown = port or 41234
        return (
            Check("mdns", bool(state["mdns"]), "..."),
            [SeenTable("Ada's table", ("192.168.1.30",), 40001)],
            [
                Check(
                    "tcp",
                    bool(state["tcp"]),
                    f"TCP port {shown} on {address}: (a firewall drops it)",
                )
            ],
        )

    monkeypatch.setattr(doctor, "read_interfaces", lambda: list(state["interfaces"]))  # type: ignore[call-overload]
    monkeypatch.setattr(doctor, "default_route_interface", lambda found: state["route"])
    monkeypatch.setattr(doctor, "_run_network_checks", network_checks)
    # On Windows (the Windows lane) the doctor reads the profile and the firewall: not here.
    unread = WindowsFindings(unread={"profiles": "not asked", "rules": "not asked"})
    monkeypatch.setattr(network_blocks, "read_windows", lambda: unread)
    return state


def test_it_checks_the_default_routes_network_and_lists_every_interface(
    machine: dict[str, object],
) -> None:
    found = diagnose()
    assert found.ok and found.used is not None and found.used.name == "wlan0"
    assert machine["asked"] == [("192.168.1.20", 0)]
    shown = found.to_json()
    assert [i["name"] for i in shown["interfaces"]] == ["lo", "docker0", "eth0", "wlan0"]
    assert [i["skipped"] for i in shown["interfaces"]] == ["loopback", "virtual", None, None]
    assert shown["interface"]["default_route"] and shown["interface"]["used"]
    assert shown["tables"] == [
        {"name": "Ada's table", "addresses": ["192.168.1.30"], "port": 40001}
    ]
    assert found.advice[0].startswith("All is well")
    several = next(line for line in found.advice if "several networks" in line)
    assert "Ethernet eth0 · 10.0.0.7" in several and "docker0" not in several


def test_it_checks_the_network_the_player_picked_in_the_window(
    machine: dict[str, object], tmp_path: Path
) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text(
        json.dumps({"network": "eth0"}), encoding="utf-8"
    )
    assert diagnose().used == ETHERNET
    assert diagnose("192.168.1.20").used is not None  # asked for: that one


def test_each_failure_gets_its_advice(machine: dict[str, object]) -> None:
    machine["mdns"] = False
    machine["tcp"] = False
    found = diagnose(port=7777)
    assert not found.ok
    text = " ".join(found.advice)
    assert "join by address" in text and "nerts-lan join --address HOST:PORT" in text
    assert "TCP port 7777" in text and "firewall" in text
    report = found.report()
    assert "FAIL  mdns" in report and "FAIL  tcp" in report and "← used" in report


def test_only_loopback_is_no_network(machine: dict[str, object]) -> None:
    machine["interfaces"] = [LO]
    machine["route"] = None
    found = diagnose()
    network = found.check("network")
    assert network is not None and not network.ok and "on no network" in network.detail
    assert "same Wi-Fi" in found.advice[0]


def test_the_loopback_asked_for_is_ours_and_the_advice_names_the_networks_friends_reach(
    machine: dict[str, object],
) -> None:
    found = diagnose("127.0.0.1")
    network = found.check("network")
    assert network is not None and not network.ok
    assert "127.0.0.1 is this computer's loopback" in network.detail
    assert machine["asked"] == [("127.0.0.1", 0)], "the checks ran on it"
    advice = found.advice[0]
    assert "not an address of this computer" not in advice
    assert "friends' laptops cannot reach" in advice
    assert "192.168.1.20" in advice and "10.0.0.7" in advice and "127.0.0.1," not in advice

    machine["interfaces"] = [LO]
    machine["route"] = None
    alone = diagnose("127.0.0.1")
    assert "same Wi-Fi" in alone.advice[0] and "not an address" not in alone.advice[0]


def test_no_interface_at_all_is_said_and_nothing_is_checked_on_it(
    machine: dict[str, object],
) -> None:
    machine["interfaces"] = []
    found = diagnose()
    assert not found.ok and found.used is None and machine["asked"] == []
    assert "no network interface at all" in found.report()


def test_an_address_that_is_not_ours_is_a_failure_that_lists_ours(
    machine: dict[str, object],
) -> None:
    found = diagnose("10.9.9.9")
    assert not found.ok and machine["asked"] == []
    assert "192.168.1.20" in found.advice[0] and "10.0.0.7" in found.advice[0]


def test_bad_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--interface", "wlan0"]) == 2
    assert "is not an IPv4 address" in capsys.readouterr().err
    assert main(["doctor", "--port", "70000"]) == 2
    assert "--port must be from 0 to 65535" in capsys.readouterr().err
    assert main(["doctor", "--timeout", "5"]) == 2
    assert "--timeout goes with --listen" in capsys.readouterr().err
    assert main(["doctor", "--probe", "10.0.0.7:99999"]) == 2
    assert "--probe: the port after ':' must be a number" in capsys.readouterr().err


def test_a_probes_line_is_answered_and_anything_else_is_a_strangers() -> None:
    token = b"0123456789abcdef"
    assert answer_to(b"nerts-lan doctor probe " + token + b"\n") == (
        b"nerts-lan doctor answer " + token + b"\n"
    )
    for stranger in (
        b"",
        b"GET / HTTP/1.1\r\n",
        b"nerts-lan doctor probe 0123456789ABCDEF\n",  # not lower-case hex
        b"nerts-lan doctor probe " + token + b"\n" + b" " * 100,  # too long
        b"nerts-lan doctor probe " + token + b"\nand more\n",
    ):
        assert answer_to(stranger) is None, stranger
    assert stranger_bytes(b"") == "nothing sent"
    assert stranger_bytes(b"\x00" * 500) == "500+ bytes: " + "\\x00" * 10 + "…"


def test_all_passing_says_a_computer_cannot_test_its_own_firewall(
    machine: dict[str, object],
) -> None:
    advice = diagnose().advice[0]
    assert "cannot test its own firewall" in advice
    assert "nerts-lan doctor --listen here and nerts-lan doctor --probe ADDRESS" in advice


def test_the_exit_status_and_json_of_the_command(
    machine: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["ok"] and shown["interface"]["address"] == "192.168.1.20"
    machine["mdns"] = False
    assert main(["doctor"]) == 1
    assert "Multicast (mDNS) does not get through here" in capsys.readouterr().out


def test_on_macos_a_refused_send_names_local_network_privacy_not_joining_by_address(
    machine: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    machine["mdns"] = False  # what the probe's refused sends make of the mDNS check
    monkeypatch.setattr(network_blocks, "PLATFORM", "darwin")
    monkeypatch.setenv("TERM_PROGRAM", "vscode")
    refusals.clear()
    refusals.record(refusals.MULTICAST_SEND, OSError(network_blocks.MACOS_EHOSTUNREACH, "No route"))
    try:
        found = diagnose()
    finally:
        refusals.clear()
    check = found.check("local network")
    assert check is not None and not check.ok
    assert found.advice[0].startswith(
        "macOS blocks this app from your network: System Settings → Privacy & Security → "
        "Local Network → allow Visual Studio Code"
    )
    assert doctor.MULTICAST_ADVICE not in found.advice  # joining by address fails the same way
    assert "FAIL  local network" in found.report()


def test_on_windows_a_public_network_fails_the_doctor_with_the_setting(
    machine: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    public = WindowsFindings(profiles=[NetworkProfile("Cafe", "Wi-Fi", "Public")], rules=[])
    monkeypatch.setattr(network_blocks, "PLATFORM", "win32")
    monkeypatch.setattr(network_blocks, "read_windows", lambda: public)
    found = diagnose()
    assert not found.ok
    assert found.advice[0].endswith("→ Wi-Fi → Cafe → Network profile type: Private.")
    shown = {c["name"]: c for c in found.to_json()["checks"]}
    assert not shown["windows network profile"]["ok"] and shown["windows firewall"]["ok"]
