"""The deal: pinned outputs of the documented PRNG and shuffle, and their statistics."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections import Counter

from nerts_lan.rules.cards import DECK
from nerts_lan.rules.deal import deal_team, random_stream, shuffled_deck, team_key
from nerts_lan.rules.engine import deal_round
from nerts_lan.rules.state import Options, Table


def _names(cards: object) -> str:
    return " ".join(str(DECK[c]) for c in cards)  # type: ignore[attr-defined]


def test_the_prng_stream_is_pinned() -> None:
    # SHA-256(b"nerts" || 0 as 8 bytes) read as big-endian 32-bit words.
    assert list(itertools.islice(random_stream(b"nerts"), 6)) == [
        173714717,
        257298336,
        374964442,
        934518873,
        3395024032,
        673180007,
    ]


def test_the_team_key_is_pinned() -> None:
    assert team_key("pinned", 0).hex() == (
        "43f6571f77158e3feac61bb536a586552f92ed32f67343a65b0ab9e5f992ccde"
    )


def test_the_shuffle_is_pinned() -> None:
    assert _names(shuffled_deck(team_key("pinned", 0))) == (
        "KC 4H KH JH 9S 8D 4C 10C KD QC QH KS 7S 2C 7H AS 7D 6H AH 5H 3S 4S 3D 8C 2H JD 10H 10D "
        "AD 4D QD 5S 8H 5C 9D QS 2D JS 2S 9C 3H 6D AC 6C 9H 8S 10S JC 5D 6S 3C 7C"
    )
    assert _names(shuffled_deck(team_key("", 0))).startswith("KC KD 2S 3D 9S QS")


def test_the_deal_splits_the_deck_as_documented() -> None:
    deck = shuffled_deck(team_key("pinned", 1))
    nerts, work, stock = deal_team("pinned", 1, 13, 4)
    assert nerts == tuple(deck[:13])
    assert work == tuple((deck[13 + i],) for i in range(4))
    assert stock == tuple(deck[17:])
    assert _names(nerts).endswith("8D 9C")  # 9C is the face-up top card


def test_options_change_the_split() -> None:
    nerts, work, stock = deal_team("x", 0, 10, 6)
    assert (len(nerts), len(work), len(stock)) == (10, 6, 36)
    assert sorted([*nerts, *(p[0] for p in work), *stock]) == list(range(52))


def test_the_same_seed_deals_the_same_cards_in_a_fresh_process() -> None:
    code = (
        "from nerts_lan.rules.engine import deal_round;"
        "from nerts_lan.rules.state import Options, Table, state_digest;"
        "t = Table(Options(), ('a', 'b', 'c'), (('x',), ('y',), ('z',)));"
        "print(state_digest(deal_round(t, 'fresh process')).hex())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    from nerts_lan.rules.state import state_digest

    table = Table(Options(), ("a", "b", "c"), (("x",), ("y",), ("z",)))
    assert done.stdout.strip() == state_digest(deal_round(table, "fresh process")).hex()


def test_different_seeds_and_different_teams_deal_differently() -> None:
    table = Table(Options(), ("a", "b"), (("x",), ("y",)))
    one = deal_round(table, "seed one")
    two = deal_round(table, "seed two")
    assert one.teams[0].cards() != two.teams[0].cards()
    assert one.teams[0].cards() != one.teams[1].cards()


def test_the_top_nerts_card_is_close_to_uniform() -> None:
    rounds = 5200
    tops = Counter(deal_team(f"uniform {i}", 0, 13, 4)[0][-1] for i in range(rounds))
    expected = rounds / 52
    chi_square = sum((tops[c] - expected) ** 2 / expected for c in range(52))
    # 51 degrees of freedom: the 99.9th percentile is about 87.
    assert len(tops) == 52
    assert chi_square < 87, chi_square
