"""A hostile stranger on the LAN (for ``soak_faults.py``): it finds the tables over mDNS, as
anyone on the Wi-Fi can, and without knowing their code it

- guesses the code: ``--guessers`` connections at a time, each sending a valid hello, a SPAKE2
  message for a random code and its key confirmation, then dialling again;
- holds idle connections: ``--idle`` connections that send a valid hello (each with a new peer
  id) and then nothing, and ``--silent`` ones that send nothing at all; each one the table
  closes is opened again.

Hellos are forged with the project's own codec (``net._mesh.handshake.hello_body``). Every
``--report-every`` seconds it prints one JSON line of counts (``"event": "stranger"``), and runs
until killed.

    ip netns exec NS python3 scripts/stranger.py --interface 10.213.7.5 --table ID
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import resource
import secrets
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import spake2  # type: ignore[import-untyped]

from nerts_lan.lan.advert import CODE_ALPHABET, CODE_LENGTH, PROTOCOL, TableInfo
from nerts_lan.lan.browse import TableBrowser
from net import PeerKey
from net._codec import HEADER, KIND_CONFIRM, KIND_HELLO, KIND_KEY_EXCHANGE, pack_body
from net._mesh.handshake import KEY_EXCHANGE_ID, NONCE_SIZE, Hello, SessionKeys, hello_body

CONNECT_TIMEOUT = 3.0
READ_TIMEOUT = 15.0
"""A guess's answer can wait behind other guessers' penalties: give it time."""
REOPEN_AFTER = 0.2
"""Seconds before an idle connection the table closed is opened again."""
OPENS_PER_SECOND = 100
"""Spread the opening of hundreds of connections (a burst would overflow the listen backlog)."""


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    _raise_descriptor_limit()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(Stranger(args).run())
    return 0


@dataclass
class Counts:
    """What the stranger did and what the tables answered."""

    guesses: int = 0
    guess_outcomes: Counter[str] = field(default_factory=Counter)
    idle_open: int = 0
    silent_open: int = 0
    opened: int = 0
    connect_failures: Counter[str] = field(default_factory=Counter)
    longest_held: float = 0.0
    """Seconds the longest idle or silent connection stayed open before the table closed it."""

    def record(self, targets: list[TableInfo]) -> dict[str, Any]:
        return {
            "event": "stranger",
            "targets": [f"{t.address}:{t.port}" for t in targets],
            "guesses": self.guesses,
            "guess_outcomes": dict(self.guess_outcomes),
            "idle_open": self.idle_open,
            "silent_open": self.silent_open,
            "opened": self.opened,
            "connect_failures": dict(self.connect_failures),
            "longest_held_s": round(self.longest_held, 1),
        }


class Stranger:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.counts = Counts()
        self.targets: list[TableInfo] = []
        self._found = asyncio.Event()
        self._opening = asyncio.Semaphore(1)

    async def run(self) -> None:
        browser = TableBrowser(self.args.interface)
        await asyncio.to_thread(browser.started)
        try:
            tasks = [asyncio.create_task(self._watch(browser))]
            tasks += [asyncio.create_task(self._report())]
            tasks += [asyncio.create_task(self._guess()) for _ in range(self.args.guessers)]
            tasks += [asyncio.create_task(self._hold(True)) for _ in range(self.args.idle)]
            tasks += [asyncio.create_task(self._hold(False)) for _ in range(self.args.silent)]
            await asyncio.gather(*tasks)
        finally:
            await asyncio.to_thread(browser.close)

    # --- what it does ---------------------------------------------------------------------------

    async def _watch(self, browser: TableBrowser) -> None:
        """Follow the adverts: a table another member advertises after its host left, too."""
        while True:
            tables = await asyncio.to_thread(browser.tables)
            wanted = self.args.table
            self.targets = [t for t in tables if not wanted or wanted in (t.table_id, t.name)]
            if self.targets:
                self._found.set()
            await asyncio.sleep(2.0)

    async def _guess(self) -> None:
        while True:
            target = await self._target()
            outcome = await self._one_guess(target)
            self.counts.guesses += 1
            self.counts.guess_outcomes[outcome] += 1
            await asyncio.sleep(random.uniform(0.0, 0.2))

    async def _hold(self, hello: bool) -> None:
        """Keep one connection open that sends a hello and then nothing (or nothing at all)."""
        while True:
            target = await self._target()
            streams = await self._open(target)
            if streams is None:
                await asyncio.sleep(1.0)
                continue
            reader, writer = streams
            if hello:
                writer.write(_frame(_hello(target)))
            opened = time.monotonic()
            self._count_open(hello, +1)
            try:
                while await reader.read(4096):
                    pass  # whatever the table says, we never answer
            except (OSError, ConnectionError):
                pass
            finally:
                self._count_open(hello, -1)
                self.counts.longest_held = max(self.counts.longest_held, time.monotonic() - opened)
                writer.close()
            await asyncio.sleep(REOPEN_AFTER)

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(self.args.report_every)
            print(json.dumps(self.counts.record(self.targets)), flush=True)

    # --- helpers --------------------------------------------------------------------------------

    async def _target(self) -> TableInfo:
        await self._found.wait()
        while not self.targets:
            await asyncio.sleep(1.0)
        return random.choice(self.targets)

    async def _open(self, target: TableInfo) -> tuple[asyncio.StreamReader, Any] | None:
        async with self._opening:  # at most OPENS_PER_SECOND new connections
            await asyncio.sleep(1 / OPENS_PER_SECOND)
        try:
            streams = await asyncio.wait_for(
                asyncio.open_connection(target.address, target.port), CONNECT_TIMEOUT
            )
        except asyncio.TimeoutError:
            self.counts.connect_failures["timeout"] += 1
            return None
        except OSError as error:
            self.counts.connect_failures[type(error).__name__] += 1
            return None
        self.counts.opened += 1
        return streams

    async def _one_guess(self, target: TableInfo) -> str:
        """One wrong code tried the whole way: hello, key exchange, confirmation; what the table
        answered (``wrong table code`` when all is well)."""
        streams = await self._open(target)
        if streams is None:
            return "no connection"
        reader, writer = streams
        try:
            mine = _hello(target)
            writer.write(_frame(mine))
            theirs = await _read_frame(reader)
            answer = _unpack(theirs)
            if not (isinstance(answer, list) and answer and answer[0] == KIND_HELLO):
                return _answer(answer)
            guess = "".join(random.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            exchange = spake2.SPAKE2_Symmetric(
                guess.encode(), idSymmetric=KEY_EXCHANGE_ID + target.table_id.encode()
            )
            writer.write(_frame([KIND_KEY_EXCHANGE, exchange.start()]))
            body = _unpack(await _read_frame(reader))
            if not (isinstance(body, list) and body[0] == KIND_KEY_EXCHANGE):
                return _answer(body)
            keys = SessionKeys.derive(exchange.finish(body[1]), mine, theirs, dialed=True)
            writer.write(_frame([KIND_CONFIRM, keys.my_confirmation]))
            return _answer(_unpack(await _read_frame(reader)))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            return "closed"
        except asyncio.TimeoutError:
            return "no answer"
        finally:
            writer.close()

    def _count_open(self, hello: bool, change: int) -> None:
        if hello:
            self.counts.idle_open += change
        else:
            self.counts.silent_open += change


def _hello(target: TableInfo) -> bytes:
    """A valid hello for a coded table, from a peer id never seen before (with a key of its
    own, as every peer of the game has: anyone can make one)."""
    key = PeerKey.generate()
    me = Hello(PROTOCOL, target.table_id, key.peer_id("stranger"), "stranger", 1, key.public_bytes)
    nonce = secrets.token_bytes(NONCE_SIZE)
    return pack_body(hello_body(me, 0, None, None, coded=target.needs_code, nonce=nonce))


def _frame(body: bytes | list[Any]) -> bytes:
    data = body if isinstance(body, bytes) else pack_body(body)
    return HEADER.pack(len(data)) + data


async def _read_frame(reader: asyncio.StreamReader) -> bytes:
    header = await asyncio.wait_for(reader.readexactly(HEADER.size), READ_TIMEOUT)
    (length,) = HEADER.unpack(header)
    if length > 4096:
        raise ConnectionError("frame too long for a handshake")
    return await asyncio.wait_for(reader.readexactly(length), READ_TIMEOUT)


def _unpack(raw: bytes) -> Any:
    import msgpack

    return msgpack.unpackb(raw, raw=False)


def _answer(body: Any) -> str:
    """A refusal's reason, or what kind of frame came instead."""
    if isinstance(body, list) and len(body) == 2 and isinstance(body[1], str):
        return body[1][:60]
    if isinstance(body, list) and body and body[0] == KIND_CONFIRM:
        return "ACCEPTED"  # the guess was right: never expected
    return "unexpected frame"


def _raise_descriptor_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interface", required=True, metavar="ADDRESS", help="for mDNS")
    parser.add_argument("--table", default=None, help="attack only this table (name or id)")
    parser.add_argument("--guessers", type=int, default=20, help="code guesses at a time")
    parser.add_argument("--idle", type=int, default=300, help="connections: a hello, then idle")
    parser.add_argument("--silent", type=int, default=100, help="connections that send nothing")
    parser.add_argument("--report-every", type=float, default=5.0, metavar="SECONDS")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
