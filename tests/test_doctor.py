"""``nerts-lan doctor`` without a network: which interface it checks, the advice it gives for
what the checks found, its text and JSON, and its usage errors (the checks themselves run in
tests/net_real/test_doctor*.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nerts_lan.doctor as doctor
from nerts_lan.cli import main
from nerts_lan.doctor import Check, SeenTable, diagnose
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


def test_the_exit_status_and_json_of_the_command(
    machine: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["ok"] and shown["interface"]["address"] == "192.168.1.20"
    machine["mdns"] = False
    assert main(["doctor"]) == 1
    assert "Multicast (mDNS) does not get through here" in capsys.readouterr().out
