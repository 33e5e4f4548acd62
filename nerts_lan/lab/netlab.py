"""Hosts in network namespaces, made by the tests and the LAN benchmark themselves (root only).

Every host is a namespace with one veth interface on a bridge that lives in a namespace of its
own, so nothing touches the machine's real interfaces, and the only addresses used are inside
those namespaces. Faults: a link taken down (a partition), a one-way cut (one host drops what
another sends it) and random packet loss with iptables (this kernel has no netem; delay is
injected in the project's own transport instead), and a burst (every packet to and from a host
dropped for a while, as during a Wi-Fi scan). Every iptables rule lives in a namespace of the lab
and carries its tag, so it goes with the lab.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys

__all__ = ["NetLab", "NetLabUnavailable", "require_iptables", "require_root_and_ip"]


_BOTH_WAYS = ("INPUT", "OUTPUT")


class NetLabUnavailable(RuntimeError):
    """Network namespaces cannot be made here; the message says why."""


def require_root_and_ip() -> None:
    """``NetLabUnavailable`` unless this process may make network namespaces."""
    geteuid = getattr(os, "geteuid", None)  # POSIX only
    if geteuid is None:
        system = {"win32": "Windows", "darwin": "macOS"}.get(sys.platform, sys.platform)
        raise NetLabUnavailable(f"{system}: network namespaces are Linux only")
    if geteuid() != 0:
        raise NetLabUnavailable("network namespaces need root (CI runs as root)")
    if shutil.which("ip") is None:
        raise NetLabUnavailable("iproute2 (ip) is not installed")


def require_iptables() -> None:
    """``NetLabUnavailable`` unless iptables is installed (packet loss, cuts, bursts)."""
    if shutil.which("iptables") is None:
        raise NetLabUnavailable("iptables is not installed")


class NetLab:
    """``hosts`` namespaces on one private bridge, with addresses 10.213.N.1, .2, ..."""

    def __init__(self, hosts: int) -> None:
        require_root_and_ip()
        self.tag = "nl" + secrets.token_hex(3)
        self.subnet = int(secrets.token_hex(1), 16)
        self.bridge = f"{self.tag}-br"
        self.hosts = [f"{self.tag}-h{i}" for i in range(hosts)]
        self._made: list[str] = []
        try:
            self._build()
        except subprocess.CalledProcessError as error:
            self.close()
            raise RuntimeError(f"could not build the test network: {error.stderr}") from None

    def address(self, host: int) -> str:
        return f"10.213.{self.subnet}.{host + 1}"

    def prefix(self, host: int) -> list[str]:
        """The command prefix that runs a program on ``host``."""
        return ["ip", "netns", "exec", self.hosts[host]]

    def cut(self, host: int) -> None:
        """Take ``host``'s link down: a partition."""
        self._ip("-n", self.bridge, "link", "set", f"p{host}", "down")

    def heal(self, host: int) -> None:
        self._ip("-n", self.bridge, "link", "set", f"p{host}", "up")

    def drop_from(self, host: int, source: int) -> None:
        """A one-way cut: ``host`` drops every packet ``source`` sends it (``source`` still
        hears ``host``); ``undrop`` heals it."""
        self._iptables(host, "-A", *self._drop_rule(source))

    def undrop(self, host: int, source: int) -> None:
        """Heal the one-way cut ``drop_from(host, source)`` made."""
        self._iptables(host, "-D", *self._drop_rule(source))

    def lose(self, host: int, probability: float) -> None:
        """Drop packets to and from ``host`` at random with ``probability``."""
        for chain in ("INPUT", "OUTPUT"):
            random = ["-m", "statistic", "--mode", "random", "--probability", str(probability)]
            self._iptables(host, "-A", chain, *random, *self._tagged("DROP"))

    def block(self, host: int) -> None:
        """Drop every packet to and from ``host`` (a burst of loss) until ``unblock``: both
        directions at once, as a radio going off the air."""
        self._at_once(host, [["-I", chain, "1", *self._tagged("DROP")] for chain in _BOTH_WAYS])

    def unblock(self, host: int) -> None:
        """Both directions flow again at once: a radio back on the air (one direction open
        tens of ms before the other would answer a peer's first datagram into a wall)."""
        self._at_once(host, [["-D", chain, *self._tagged("DROP")] for chain in _BOTH_WAYS])

    def close(self) -> None:
        """Delete the lab's namespaces (their iptables rules go with them). The programs still
        running in one keep it alive until they end: stop them first."""
        for namespace in reversed(self._made):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)
        self._made.clear()

    def _build(self) -> None:
        self._netns(self.bridge)
        self._ip("-n", self.bridge, "link", "add", "br0", "type", "bridge")
        self._ip("-n", self.bridge, "link", "set", "br0", "up")
        for index, host in enumerate(self.hosts):
            self._netns(host)
            self._ip(
                "link",
                "add",
                f"v{index}",
                "netns",
                host,
                "type",
                "veth",
                "peer",
                "name",
                f"p{index}",
                "netns",
                self.bridge,
            )
            self._ip("-n", host, "link", "set", f"v{index}", "name", "eth0")
            self._ip("-n", host, "addr", "add", f"{self.address(index)}/24", "dev", "eth0")
            self._ip("-n", host, "link", "set", "eth0", "up")
            self._ip("-n", host, "link", "set", "lo", "up")
            self._ip("-n", host, "route", "add", "224.0.0.0/4", "dev", "eth0")
            self._ip("-n", self.bridge, "link", "set", f"p{index}", "master", "br0")
            self._ip("-n", self.bridge, "link", "set", f"p{index}", "up")

    def _drop_rule(self, source: int) -> list[str]:
        return ["INPUT", "-s", self.address(source), *self._tagged("DROP")]

    def _tagged(self, target: str) -> list[str]:
        return ["-m", "comment", "--comment", self.tag, "-j", target]

    def _iptables(self, host: int, *rule: str) -> None:
        require_iptables()
        subprocess.run(
            [*self.prefix(host), "iptables", "-w", *rule],
            check=True,
            capture_output=True,
            text=True,
        )

    def _at_once(self, host: int, rules: list[list[str]]) -> None:
        """Apply ``rules`` to the filter table of ``host`` in one commit (iptables-restore is
        atomic per table)."""
        require_iptables()
        script = "*filter\n" + "".join(" ".join(rule) + "\n" for rule in rules) + "COMMIT\n"
        subprocess.run(
            [*self.prefix(host), "iptables-restore", "-w", "--noflush"],
            input=script,
            check=True,
            capture_output=True,
            encoding="utf-8",
        )

    def _netns(self, name: str) -> None:
        self._ip("netns", "add", name)
        self._made.append(name)

    @staticmethod
    def _ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True, text=True)
