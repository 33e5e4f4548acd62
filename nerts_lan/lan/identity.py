"""This laptop's peer key, kept in the data folder, and the peer ids derived from it.

Every laptop has one Ed25519 key (``net.PeerKey``), made the first time the game runs and kept in
``key_path()`` (readable by this user only). A player's peer id is the key's id under the slug of
their name (``net.peer_id_of``), so the same player on the same laptop keeps their id, and their
seat after a crash, as before; nobody else can take that id, since the handshake proves the key.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from nerts_lan.folders import data_folder
from net import PeerKey

__all__ = ["KEY_FILE", "key_path", "label_of", "laptop_key", "laptop_peer_id"]

KEY_FILE = "peer.key"
MAX_SLUG = 32

log = logging.getLogger(__name__)


def key_path() -> Path:
    """Where this laptop's key lives: the one place that says so."""
    return data_folder() / KEY_FILE


def laptop_key(path: Path | None = None) -> PeerKey:
    """This laptop's key (``key_path()``), made on first use. A key that cannot be read or
    saved (a read-only or damaged data folder) gives way to a fresh one for this run only, with
    a warning: the game still plays, but a crash then loses the seat."""
    path = path or key_path()
    try:
        return PeerKey.load_or_create(path)
    except (OSError, ValueError) as error:
        log.warning("cannot keep the peer key in %s (%s): using one for this run only", path, error)
        return PeerKey.generate()


def label_of(name: str) -> str:
    """The readable part of a peer id: the name as a slug (``peer`` when nothing is left)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:MAX_SLUG] or "peer"


def laptop_peer_id(name: str, key: PeerKey | None = None) -> str:
    """The peer id of player ``name`` on this laptop (under ``key``, by default the laptop's)."""
    return (key or laptop_key()).peer_id(label_of(name))
