"""A table on the LAN as the lobby sees it: the mDNS advert, the protocol version, table codes,
peer ids and the options a peer takes part with.

A host advertises its table over mDNS (``SERVICE_TYPE``); ``table_from_advert`` reads an advert
back into a ``TableInfo``. A private table has a code (``make_table_code``), compared by both ends
after ``normalize_code``; a peer that does not know it is refused with one of ``CODE_REFUSALS``.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

from nerts_lan.lan.identity import label_of, laptop_peer_id
from net import CODE_NEEDED, NO_CODE_HERE, WRONG_CODE, Advert, CoreConfig, PeerKey, owns

__all__ = [
    "CODE_REFUSALS",
    "DEFAULT_PORT",
    "PROTOCOL",
    "SERVICE_TYPE",
    "LanOptions",
    "TableInfo",
    "make_peer_id",
    "make_table_code",
    "normalize_code",
    "persistent_peer_id",
    "refusal_text",
    "table_from_advert",
]

SERVICE_TYPE = "_nerts._tcp.local."
PROTOCOL = 4
"""The game's wire protocol version, in the mDNS advert and in every connection's hello (2: peer
keys, signed actions; 3: signed votes, decisions and expulsions carrying their certificate,
signed leaves; 4: digests of each author's entries in every frame, evidence of equivocation)."""

DEFAULT_PORT = 7777
"""The TCP port a table listens on when it is free (else any free port, shown in the host's
lobby): what a player joining by address may leave out."""

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 4
MAX_CODE_LENGTH = 32


@dataclass(frozen=True)
class TableInfo:
    """A table as the lobby lists it (from its mDNS advert)."""

    table_id: str
    name: str
    host_peer: str
    host_name: str
    mode: str
    seats_taken: int
    seats_total: int
    state: str
    version: int
    address: str
    port: int
    needs_code: bool = False
    """The host gave the table a code: joining takes it."""


CODE_REFUSALS = (WRONG_CODE, CODE_NEEDED, NO_CODE_HERE)
"""What the table answers a peer whose code does not match."""


def refusal_text(reason: str) -> str:
    """What to tell a player the table refused (``reason``, one of ``CODE_REFUSALS``)."""
    if reason == WRONG_CODE:
        return "wrong code: check it with the host and try again"
    return f"the table refused us: {reason}"


@dataclass
class LanOptions:
    """How this peer takes part."""

    name: str
    peer_id: str
    interface: str | None = None
    incarnation: int = 0
    team: int | None = None
    bot: str | None = None
    """Play the local seat with a bot of this level (headless peers)."""
    bot_delay: float = 1.0
    players: int | None = None
    """Host only: start the match once this many members are seated and ready."""
    spectate: bool = False
    intermission: float = 0.0
    """Seconds between the end of a round and this peer's commit to the next deal (time to read
    the scores in a window; the deal waits for every member's commit)."""
    pace: float = 0.0
    """A window's seat: the longest the next deal waits for its player's "next round"
    (``PeerOptions.pace``; 0: the intermission only)."""
    core: CoreConfig = field(default_factory=CoreConfig)
    log_folder: str | None = None
    """Where the match log is appended (None: no log)."""
    table_code: str | None = None
    """The table's code (``normalize_code`` it first): only peers that know it link with us,
    and every frame between us is authenticated. None: an open table."""
    key: PeerKey = field(default_factory=PeerKey.generate)
    """This peer's key (the laptop's, ``nerts_lan.lan.identity.laptop_key``; by default a fresh
    one): it proves ``peer_id`` in every handshake and signs every action. A ``peer_id`` that is not
    this key's id is taken as the readable label of one (``"ann-1"`` becomes ``"ann-1-<hash>"``)."""

    def __post_init__(self) -> None:
        if not owns(self.peer_id, self.key.public_bytes):
            self.peer_id = self.key.peer_id(label_of(self.peer_id))


def make_peer_id(name: str, suffix: str | None = None) -> str:
    """A peer id from a display name: a readable slug plus a random (or given) suffix."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:32] or "peer"
    return f"{slug}-{suffix or secrets.token_hex(4)}"


def make_table_code() -> str:
    """A fresh code for a private table: four characters that cannot be misread (no 0/O, 1/I).
    32⁴ codes, and each wrong guess costs the guesser a second (``net._mesh.mesh``)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(typed: str) -> str | None:
    """What a player typed as a table code, the way both ends compare it: upper case, without
    spaces or dashes, and the easily confused 0/O and 1/I read as O and I. None when empty."""
    code = "".join(ch for ch in typed.upper() if not ch.isspace() and ch != "-")
    code = code.replace("0", "O").replace("1", "I")
    return code[:MAX_CODE_LENGTH] or None


def persistent_peer_id(name: str, key: PeerKey | None = None) -> str:
    """The same peer id for the same name on this machine (the id of the laptop's key, kept in
    the data folder, under the name), so that a player whose game crashed and who joins again
    takes their seat back (see ``nerts_lan.lan.identity``)."""
    return laptop_peer_id(name, key)


def table_from_advert(advert: Advert) -> TableInfo | None:
    """The table an mDNS advert describes, or None when it is not a table we can read."""
    props = advert.properties
    try:
        taken, total = (int(x) for x in props.get("seats", "0/0").split("/"))
        return TableInfo(
            table_id=advert.instance_id,
            name=props.get("name", advert.display_name)[:40],
            host_peer=props["host"][:64],
            host_name=props.get("hostname", "")[:64],
            mode=props.get("mode", "singles"),
            seats_taken=taken,
            seats_total=total,
            state=props.get("state", "lobby"),
            version=int(props.get("v", "0")),
            address=advert.addresses[0],
            port=advert.port,
            needs_code=props.get("code") == "1",
        )
    except (KeyError, ValueError, IndexError):
        return None
