"""A host restarted after a crash, and the noise around rejoins, with real processes: a crashed
host restarted with its own ``host`` command takes its seat back at the table the others still
play; a failed mDNS send is one line, not a traceback."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.waiting import until

from .netlab import NetLab
from .peers import PeerProcess

pytestmark = pytest.mark.netns


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
    drop = ["iptables", "-A", "OUTPUT", "-p", "udp", "--dport", "5353", "-j", "DROP"]
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
