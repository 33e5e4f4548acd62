"""The deal: the project's own PRNG and shuffle, identical on every OS and Python version.

The PRNG is SHA-256 in counter mode (a hash-DRBG in spirit): block ``i`` of the stream for a key
is ``SHA-256(key || i as 8 bytes big-endian)``, read as eight 32-bit big-endian words. Integers
below ``n`` are drawn by rejection sampling (words at or above the largest multiple of ``n`` are
skipped), so there is no modulo bias. The shuffle is Fisher-Yates from the last position down:
for ``i`` from 51 to 1, swap position ``i`` with a drawn position ``j`` in ``0..i``.

Each team's deck is keyed separately: ``key = SHA-256("nerts-lan deal v1" || 0x00 || seed ||
0x00 || team index as decimal)``, all UTF-8, so the deal of one team says nothing about another.

A shuffled deck ``d[0..51]`` starting from the ordered deck AS..KS AH..KH AD..KD AC..KC is split
as: the nerts pile is ``d[0:pile]`` (bottom to top, so ``d[pile-1]`` is its face-up top card);
work pile ``i`` (from 1) is ``[d[pile+i-1]]``; the stock is ``d[pile+work:]`` (bottom to top, so
the deck's last card is the first one a flip turns). The waste starts empty.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from nerts_lan.rules.cards import DECK

__all__ = ["DealtTableau", "deal_team", "random_stream", "shuffled_deck", "team_key"]

DealtTableau = tuple[tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...]]
"""(nerts pile, work piles, stock), each bottom to top."""


def team_key(seed: str, team_index: int) -> bytes:
    """The PRNG key of one team's deck for a round seed."""
    material = b"nerts-lan deal v1\x00" + seed.encode("utf-8") + b"\x00" + str(team_index).encode()
    return hashlib.sha256(material).digest()


def random_stream(key: bytes) -> Iterator[int]:
    """Endless 32-bit words: SHA-256(key || counter) blocks, eight big-endian words each."""
    counter = 0
    while True:
        block = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
        for offset in range(0, 32, 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


def shuffled_deck(key: bytes) -> list[int]:
    """The 52 cards in the order the documented Fisher-Yates shuffle leaves them for ``key``."""
    deck = list(range(52))
    words = random_stream(key)
    for i in range(51, 0, -1):
        j = _below(words, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return [DECK[c] for c in deck]


def deal_team(seed: str, team_index: int, pile: int, work: int) -> DealtTableau:
    """Deal one team's tableau for the round ``seed``."""
    deck = shuffled_deck(team_key(seed, team_index))
    nerts = tuple(deck[:pile])
    work_piles = tuple((deck[pile + i],) for i in range(work))
    stock = tuple(deck[pile + work :])
    return nerts, work_piles, stock


def _below(words: Iterator[int], n: int) -> int:
    """A uniform integer in ``0..n-1`` from the word stream, by rejection sampling."""
    limit = (1 << 32) - (1 << 32) % n
    for word in words:
        if word < limit:
            return word % n
    raise AssertionError("the random stream is endless")
