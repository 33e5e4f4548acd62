"""One finding of ``nerts-lan doctor``, whichever part checked it (``nerts_lan.doctor.checkup``,
``nerts_lan.doctor.link``, ``nerts_lan.doctor.blocks``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Check"]


@dataclass(frozen=True)
class Check:
    """One check: its name ("network", "mdns", "tcp", "data folder", "config folder", "local
    network", "windows network profile"...), whether it passed, and what was found, in words."""

    name: str
    ok: bool
    detail: str
