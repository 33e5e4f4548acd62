"""The LAN service under both front ends, the window's lobby (``ui.lobby.lan``) and the headless
peers (``nerts_lan.headless.play``): how this laptop's player takes part, whether hosting a table
goes back to the one the player's crashed game was at (or, when that table is gone, brings its
match back from the match log), and what others type to join by address.
The front ends only present what it decides, each in its own words.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nerts_lan.folders import data_folder
from nerts_lan.lan.advert import LanOptions, TableInfo, normalize_code, persistent_peer_id
from nerts_lan.lan.by_address import shareable_addresses
from nerts_lan.lan.comeback import LiveTable, live_table
from nerts_lan.lan.identity import laptop_key
from nerts_lan.lan.resume import NotResumable, Resumable, match_to_resume

__all__ = [
    "Comeback",
    "as_new_incarnation",
    "host_or_return",
    "match_back",
    "options_for",
    "typed_addresses",
]


@dataclass(frozen=True)
class Comeback:
    """The table the player's crashed game was at (``previous``, found in its match logs) and
    its advert on the LAN now: go back to its seat there; None, the LAN no longer has it: host
    anew."""

    previous: LiveTable
    table: TableInfo | None


def options_for(
    name: str,
    *,
    interface: str | None = None,
    team: int | None = None,
    bot: str | None = None,
    bot_delay: float = 1.0,
    intermission: float = 0.0,
    pace: float = 0.0,
    code: str | None = None,
    peer_id: str | None = None,
) -> LanOptions:
    """How this laptop's player ``name`` takes part: with the laptop's key and its peer id for
    that name (``peer_id``: another label), the match logs in the data folder, on ``interface``
    (None: every one), at ``team`` (from 0; None: the first free seat), ``code`` as typed (None
    or empty: an open table); ``intermission`` and ``pace``: see ``LanOptions``."""
    key = laptop_key()
    return LanOptions(
        name=name,
        peer_id=peer_id or persistent_peer_id(name, key),
        key=key,
        interface=interface,
        team=team,
        bot=bot,
        bot_delay=bot_delay,
        intermission=intermission,
        pace=pace,
        log_folder=str(data_folder() / "logs"),
        table_code=normalize_code(code) if code else None,
    )


def as_new_incarnation(options: LanOptions) -> LanOptions:
    """``options`` for a join: a new incarnation of this peer, higher after every restart, so
    that the table tells it from the one that crashed."""
    options.incarnation = int(time.time() * 1000)
    return options


def host_or_return(
    options: LanOptions, table_name: str, advertised: Callable[[str], TableInfo | None]
) -> Comeback | None:
    """Whether hosting ``table_name`` goes back to the table the player's crashed game was at
    (``nerts_lan.lan.comeback``): None, there is none (host anew); else that table, with its
    advert if ``advertised`` (a table id to what the LAN says of it) still finds it."""
    if options.log_folder is None:
        return None
    live = live_table(Path(options.log_folder), options.peer_id, table_name)
    if live is None:
        return None
    return Comeback(live, advertised(live.table_id))


def match_back(comeback: Comeback, options: LanOptions) -> Resumable | NotResumable:
    """When the table of ``comeback`` is gone from the LAN (nobody is left to rejoin): the match
    its log holds, to host again and go on with (``nerts_lan.lan.resume``), or why not."""
    previous = comeback.previous
    return match_to_resume(previous.log_path, previous.table_id, options.peer_id)


def typed_addresses(interface: str | None, port: int) -> list[str]:
    """What others may type to join a table at ``port`` of this laptop: its addresses (the one
    of the default route, most likely the Wi-Fi, first) with the port."""
    return [f"{address}:{port}" for address in shareable_addresses(interface)]
