"""The tests' network namespaces: ``nerts_lan.lab.netlab`` (the LAN benchmark uses it too), with a
test skipped, not failed, where namespaces or iptables are missing."""

from __future__ import annotations

import pytest

from nerts_lan.lab import netlab

__all__ = ["NetLab", "require_iptables", "require_root_and_ip"]


def require_root_and_ip() -> None:
    try:
        netlab.require_root_and_ip()
    except netlab.NetLabUnavailable as why:
        pytest.skip(str(why))


def require_iptables() -> None:
    """Skip a test that needs iptables where it is missing, before it starts anything (a rule
    added from a thread or a script could not skip it; it would fail it)."""
    require_root_and_ip()
    try:
        netlab.require_iptables()
    except netlab.NetLabUnavailable as why:
        pytest.skip(str(why))


class NetLab(netlab.NetLab):
    """``nerts_lan.lab.netlab.NetLab``; a test that needs what is missing here is skipped."""

    def __init__(self, hosts: int) -> None:
        require_root_and_ip()
        try:
            super().__init__(hosts)
        except RuntimeError as error:
            pytest.fail(str(error))

    def _iptables(self, host: int, *rule: str) -> None:
        require_iptables()
        super()._iptables(host, *rule)
