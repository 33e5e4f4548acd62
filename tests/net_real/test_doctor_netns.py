"""``nerts-lan doctor`` run as a real process on a host of a network namespace (root only): all
well; multicast dropped by the network; a desktop firewall's rules (inbound from other hosts
dropped, on the game's TCP port, its UDP port, multicast), which the self-check cannot see and
says so, and which ``--probe`` from another host sees and names; a rule that drops even the
host's own traffic on the port of a table hosted there; an extra interface (Docker's and a second
network); and a host with no network and no writable folder."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.net_real.netlab import NetLab, require_iptables
from tests.net_real.peers import PeerProcess
from tests.waiting import until

pytestmark = pytest.mark.netns

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lab() -> Iterator[NetLab]:
    lab = NetLab(1)
    yield lab
    lab.close()


@pytest.fixture
def pair() -> Iterator[NetLab]:
    """Two laptops: 0 has the firewall and listens, 1 probes it."""
    lab = NetLab(2)
    yield lab
    lab.close()


def _doctor(
    prefix: list[str], folder: Path, *arguments: str, **environment: str
) -> tuple[int, dict[str, Any], str]:
    """Run the doctor with ``--json``; its exit status, its object, its standard error."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NERTS_LAN_DATA": str(folder / "data"),
        "NERTS_LAN_CONFIG_DIR": str(folder / "config"),
        **environment,
    }
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "nerts_lan", "doctor", "--json", *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def _check(found: dict[str, Any], name: str) -> dict[str, Any]:
    checks: list[dict[str, Any]] = found["checks"]
    return next(c for c in checks if c["name"] == name)


def _iptables(lab: NetLab, *rule: str) -> None:
    require_iptables()
    subprocess.run(
        [
            *lab.prefix(0),
            "iptables",
            "-w",
            *rule,
            "-m",
            "comment",
            "--comment",
            lab.tag,
            "-j",
            "DROP",
        ],
        check=True,
        capture_output=True,
    )


def _desktop_firewall(lab: NetLab, *match: str) -> None:
    """A desktop firewall's rule on host 0: what matches ``match`` is dropped when it comes from
    another host. Traffic to the host's own address goes over lo on Linux (the local routing
    table), so ``! -i lo`` spares it, as every desktop firewall spares loopback. Multicast looped
    back to its sender comes in on the interface it went out of, so there the rule spares what
    comes from a local address instead."""
    route = subprocess.run(
        [*lab.prefix(0), "ip", "route", "get", lab.address(0)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert " dev lo " in route, route
    spare = ["-m", "addrtype", "!", "--src-type", "LOCAL"] if "224.0.0.0/4" in match else []
    _iptables(lab, "-A", "INPUT", "!", "-i", "lo", *spare, *match)


def _probe(lab: NetLab, folder: Path, port: int) -> dict[str, Any]:
    """``doctor --probe`` from host 1 at host 0, which runs ``doctor --listen`` meanwhile."""
    listener = PeerProcess(
        ["doctor", "--listen", "--json", "--port", str(port), "--timeout", "60"],
        folder / "listener",
        prefix=lab.prefix(0),
    )
    try:
        listening = listener.wait_for("listening")
        assert (listening["address"], listening["port"]) == (lab.address(0), port)
        status, found, _ = _doctor(lab.prefix(1), folder, "--probe", f"{lab.address(0)}:{port}")
        assert status == (0 if found["ok"] else 1)
        return found
    finally:
        listener.process.terminate()
        listener.process.wait(10)


def _ip(lab: NetLab, *arguments: str) -> None:
    subprocess.run(["ip", "-n", lab.hosts[0], *arguments], check=True, capture_output=True)


def test_all_is_well_on_a_plain_network(lab: NetLab, tmp_path: Path) -> None:
    status, found, _ = _doctor(lab.prefix(0), tmp_path)
    assert status == 0 and found["ok"], found
    assert found["interface"]["name"] == "eth0"
    assert found["interface"]["address"] == lab.address(0)
    assert all(check["ok"] for check in found["checks"])
    assert {c["name"] for c in found["checks"]} == {
        "network",
        "mdns",
        "tcp",
        "data folder",
        "config folder",
    }
    assert found["advice"][0].startswith("All is well")


def test_multicast_blocked_fails_the_mdns_check_and_advises_joining_by_address(
    lab: NetLab, tmp_path: Path
) -> None:
    _iptables(lab, "-A", "OUTPUT", "-d", "224.0.0.0/4")
    _iptables(lab, "-A", "INPUT", "-d", "224.0.0.0/4")
    status, found, _ = _doctor(lab.prefix(0), tmp_path)
    assert status == 1 and not found["ok"]
    assert not _check(found, "mdns")["ok"]
    assert _check(found, "tcp")["ok"] and _check(found, "network")["ok"]
    advice = " ".join(found["advice"])
    assert "join by address" in advice and "nerts-lan join --address HOST:PORT" in advice


def test_all_is_well_between_two_laptops(pair: NetLab, tmp_path: Path) -> None:
    port = 20000 + secrets.randbelow(40000)
    found = _probe(pair, tmp_path, port)
    assert found["ok"], found
    assert found["advice"][0].startswith("All is well between these two laptops")


def test_a_desktop_firewall_on_the_game_port_is_unseen_from_itself_and_seen_by_a_probe(
    pair: NetLab, tmp_path: Path
) -> None:
    port = 20000 + secrets.randbelow(40000)
    _desktop_firewall(pair, "-p", "tcp", "--dport", str(port))
    status, found, _ = _doctor(pair.prefix(0), tmp_path, "--port", str(port))
    assert status == 0 and _check(found, "tcp")["ok"]  # it cannot see its own firewall...
    assert "cannot test its own firewall" in found["advice"][0]  # ...and says so
    assert "--probe ADDRESS from theirs" in found["advice"][0]

    probed = _probe(pair, tmp_path, port)
    tcp = _check(probed, "tcp")
    assert not tcp["ok"] and f"the other laptop's firewall drops TCP {port}" in tcp["detail"]
    assert _check(probed, "udp")["ok"] and _check(probed, "mdns")["ok"]
    advice = " ".join(probed["advice"])
    assert "Network profile type: Private" in advice and "python.exe" in advice


def test_a_desktop_firewall_on_the_udp_port_is_seen_by_a_probe(
    pair: NetLab, tmp_path: Path
) -> None:
    port = 20000 + secrets.randbelow(40000)
    _desktop_firewall(pair, "-p", "udp", "--dport", str(port))
    probed = _probe(pair, tmp_path, port)
    udp = _check(probed, "udp")
    assert not udp["ok"] and f"the other laptop's firewall drops UDP {port}" in udp["detail"]
    assert _check(probed, "tcp")["ok"] and _check(probed, "mdns")["ok"]


def test_a_desktop_firewall_on_multicast_is_unseen_from_itself_and_seen_by_a_probe(
    pair: NetLab, tmp_path: Path
) -> None:
    _desktop_firewall(pair, "-d", "224.0.0.0/4")
    status, found, _ = _doctor(pair.prefix(0), tmp_path)
    assert status == 0 and _check(found, "mdns")["ok"]
    assert "cannot test its own firewall" in found["advice"][0]

    probed = _probe(pair, tmp_path, 20000 + secrets.randbelow(40000))
    mdns = _check(probed, "mdns")
    assert not mdns["ok"] and "multicast between the two laptops is blocked" in mdns["detail"]
    assert _check(probed, "tcp")["ok"] and _check(probed, "udp")["ok"]
    assert any("join by address" in line for line in probed["advice"])


def test_an_extra_network_and_dockers_bridge_the_default_route_wins_and_both_are_listed(
    lab: NetLab, tmp_path: Path
) -> None:
    for name, peer, address in (("docker0", "dk0p", "172.17.0.1/16"), ("eth1", "e1p", "")):
        _ip(lab, "link", "add", name, "type", "veth", "peer", "name", peer)
        _ip(lab, "link", "set", peer, "up")
        _ip(lab, "link", "set", name, "up")
        if address:
            _ip(lab, "addr", "add", address, "dev", name)
    _ip(lab, "addr", "add", "10.77.0.5/24", "dev", "eth1")
    # The default route goes out of eth1: eth1 is picked over eth0 (and over docker0).
    _ip(lab, "route", "add", "default", "via", "10.77.0.254", "dev", "eth1")
    status, found, _ = _doctor(lab.prefix(0), tmp_path)
    assert status == 0, found
    assert found["interface"]["name"] == "eth1" and found["interface"]["default_route"]
    listed = {i["name"]: i for i in found["interfaces"]}
    assert {"lo", "eth0", "eth1", "docker0"} <= set(listed)
    assert listed["docker0"]["skipped"] == "virtual" and listed["eth0"]["skipped"] is None
    several = [line for line in found["advice"] if "several networks" in line]
    assert several and lab.address(0) in several[0] and "--interface" in several[0]

    # Asked for eth0 by address: checked there.
    status, found, _ = _doctor(lab.prefix(0), tmp_path, "--interface", lab.address(0))
    assert status == 0 and found["interface"]["name"] == "eth0"


def test_no_network_and_no_writable_folder_are_clear_failures(lab: NetLab, tmp_path: Path) -> None:
    _ip(lab, "link", "set", "eth0", "down")
    _ip(lab, "addr", "flush", "dev", "eth0")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    status, found, _ = _doctor(lab.prefix(0), tmp_path, NERTS_LAN_DATA=str(blocker / "nerts"))
    assert status == 1
    network = _check(found, "network")
    assert not network["ok"] and "on no network" in network["detail"]
    assert not _check(found, "data folder")["ok"] and _check(found, "config folder")["ok"]
    assert any("NERTS_LAN_DATA" in line for line in found["advice"])

    status, found, _ = _doctor(lab.prefix(0), tmp_path, "--interface", "10.9.9.9")
    assert status == 1
    assert "no interface of this computer has the address 10.9.9.9" in str(found["checks"])


def test_a_rule_dropping_even_own_traffic_on_a_hosted_tables_port_is_named(
    lab: NetLab, tmp_path: Path
) -> None:
    """No desktop firewall drops a host's own traffic (see the tests above), but a rule on lo
    does: the one case the self-check sees, and it names the port of the table hosted there."""
    host = PeerProcess(
        ["host", "--headless", "--name", "Ann", "--table", "Doc", "--interface", lab.address(0)],
        tmp_path / "host",
        prefix=lab.prefix(0),
    )
    try:
        port = host.wait_for("hosting")["port"]
        runs: list[dict[str, Any]] = []

        def table_listed() -> bool:
            runs.append(_doctor(lab.prefix(0), tmp_path)[1])
            return any(t["port"] == port for t in runs[-1]["tables"])

        until(table_listed, 30, what="the doctor to see the table hosted here")
        hosted = f"TCP port {port} (the table hosted here)"
        assert any(c["ok"] and hosted in c["detail"] for c in runs[-1]["checks"])

        _iptables(lab, "-A", "INPUT", "-p", "tcp", "--dport", str(port))
        # The doctor checks the port of a table its mDNS browse saw: on a loaded machine one
        # browse may miss the advert, so look again until it is seen.
        statuses: list[int] = []

        def blocked_table_listed() -> bool:
            status, found, _ = _doctor(lab.prefix(0), tmp_path)
            statuses.append(status)
            runs.append(found)
            return any(t["port"] == port for t in found["tables"])

        until(blocked_table_listed, 60, what="the doctor to see the table behind the firewall")
        status, found = statuses[-1], runs[-1]
        assert status == 1
        assert any(not c["ok"] and hosted in c["detail"] for c in found["checks"])
        assert any(f"blocks TCP port {port}" in line for line in found["advice"])
    finally:
        host.stop()
