"""A host restarted after a crash, and the noise around rejoins, with real processes: a crashed
host restarted with its own ``host`` command takes its seat back at the table the others still
play; a failed mDNS send is one line, not a traceback."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net_real.hosts import peer_on, same_hashes
from tests.net_real.netlab import NetLab
from tests.net_real.peers import PeerProcess
from tests.waiting import until

pytestmark = pytest.mark.netns

"""Bots slow enough that a round lasts while a peer is killed and restarted."""


def test_a_crashed_host_restarted_with_its_own_command_takes_its_seat_back(
    lab3: NetLab, tmp_path: Path
) -> None:
    """The host is killed mid-round and started again with the same command and data folder:
    it finds its table (now advertised by Bo) by id, rejoins it as the same peer, and the
    match ends with the same hashes everywhere."""
    table = "Comeback " + lab3.tag
    hosting = ["host", "--name", "Ann", "--table", table, "--players", "3", "--rounds", "2"]
    ann = peer_on(lab3, 0, tmp_path, *hosting)
    peers: list[PeerProcess] = [ann]
    try:
        hosted = ann.wait_for("hosting")
        for host, name in ((1, "Bo"), (2, "Cy")):
            joining = ["join", "--name", name, "--table", table, "--rounds", "2"]
            peers.append(peer_on(lab3, host, tmp_path, *joining))
        bo, cy = peers[1:]
        ann.wait_for("round_started", timeout=30)
        ann_id = ann.wait_for("joined")["peer"]
        ann.kill()
        bo.wait_for("peer_gone", timeout=15, peer=ann_id)
        again = peer_on(lab3, 0, tmp_path, *hosting)
        peers.append(again)
        back = again.wait_for("back_to_table", timeout=20)
        assert back["id"] == hosted["id"] and back["host"] == "Bo"
        assert again.wait_for("joined", timeout=20)["peer"] == ann_id
        assert not again.events("hosting")
        bo.wait_for("peer_returned", timeout=20, peer=ann_id)
        cy.wait_for("peer_returned", timeout=20, peer=ann_id)
        for peer in (bo, cy, again):
            assert peer.finish(120) == 0, peer.stderr[-3000:]
        same_hashes(bo, cy, again)
        assert again.events("round_over"), "the restarted host played no round to its end"
        printed = [r["event"] for r in again.lines]
        assert printed.index("joined") < printed.index("round_started"), printed  # issue 25
    finally:
        for peer in peers:
            peer.stop()


@pytest.fixture
def lab1() -> Iterator[NetLab]:
    lab = NetLab(1)
    yield lab
    lab.close()


def test_a_failed_mdns_send_is_one_line_not_a_traceback(lab1: NetLab, tmp_path: Path) -> None:
    """Under a firewall that drops mDNS (sendto fails with EPERM), zeroconf's error is one
    line with --verbose and nothing without it."""
    if shutil.which("iptables") is None:
        pytest.skip("iptables is not installed")
    drop = ["iptables", "-w", "-A", "OUTPUT", "-p", "udp", "--dport", "5353", "-j", "DROP"]
    subprocess.run([*lab1.prefix(0), *drop], check=True, capture_output=True)

    def host(name: str, *extra: str) -> PeerProcess:
        args = ["host", "--headless", "--name", name, "--table", f"Dropped {name}"]
        args += ["--interface", lab1.address(0), "--timeout", "4", *extra]
        return PeerProcess(args, tmp_path / name, prefix=lab1.prefix(0))

    verbose, quiet = host("Vic", "--verbose"), host("Quin")
    try:
        verbose.wait_for("hosting")
        until(lambda: "Operation not permitted" in verbose.stderr, timeout=20, what="EPERM")
        verbose.finish(30)
        quiet.finish(30)
        sends = [line for line in verbose.stderr.splitlines() if "Operation not permitted" in line]
        assert sends and all("zeroconf" in line for line in sends), verbose.stderr
        assert "Traceback" not in verbose.stderr, verbose.stderr
        assert quiet.stderr == "", quiet.stderr
    finally:
        verbose.stop()
        quiet.stop()
