"""What strangers may cost a mesh, per source address, in simulated time: the wrong-code gates,
the key exchange budgets and the pool of connections not known to be a member's."""

from __future__ import annotations

import pytest

from net._mesh.strangers import CodeCheckGates, HandshakeBudgets, StrangerPool


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


GUESSER, JOINER, MEMBER = "10.0.0.66", "10.0.0.7", "10.0.0.8"


def test_a_failure_holds_back_its_own_address_only() -> None:
    """Guessers on one laptop: a joiner or a returning member on another is checked at once."""
    clock = FakeClock()
    gates = CodeCheckGates(penalty=1.0, clock=clock)
    for _ in range(20):
        gates.of(GUESSER, known=False).hold()
    assert gates.of(GUESSER, known=False).wait() == pytest.approx(1.0)
    assert gates.of(JOINER, known=False).wait() == 0
    assert gates.of(MEMBER, known=True).wait() == 0


def test_a_stranger_claiming_a_members_id_still_pays_its_address_penalty() -> None:
    """The peer id in a hello is not authenticated: claiming a member's skips no one's queue
    but the other addresses', and a failure still holds back the claimer's own address."""
    clock = FakeClock()
    gates = CodeCheckGates(penalty=1.0, clock=clock)
    gates.of(GUESSER, known=True).hold()
    assert gates.of(GUESSER, known=True).wait() == pytest.approx(1.0)
    assert gates.of(GUESSER, known=False).wait() == pytest.approx(1.0)
    clock.now = 1.0
    assert gates.of(GUESSER, known=True).wait() == 0


def test_the_gates_forget_open_addresses_and_share_an_overflow_gate_when_full() -> None:
    clock = FakeClock()
    gates = CodeCheckGates(penalty=1.0, clock=clock, capacity=3)
    for i in range(3):
        gates.of(f"10.0.1.{i}", known=False).hold()
    assert len(gates) == 3
    # Full of held addresses: the ones left out share a gate, strangers apart from known ids.
    gates.of("10.0.2.1", known=False).hold()
    assert gates.of("10.0.2.2", known=False).wait() == pytest.approx(1.0)
    assert gates.of("10.0.2.3", known=True).wait() == 0  # a member is not queued behind them
    assert len(gates) == 3
    clock.now = 1.5  # every hold is over: nothing left to remember
    assert gates.of("10.0.2.2", known=False).wait() == 0
    assert len(gates) == 0


def test_a_key_exchange_budget_per_address_gives_its_burst_then_its_rate() -> None:
    budgets = HandshakeBudgets(rate=2.0, burst=5)
    assert [budgets.allow(GUESSER, 0.0) for _ in range(7)] == [True] * 5 + [False] * 2
    assert budgets.allow(JOINER, 0.0)  # another address has its own budget
    assert budgets.allow(GUESSER, 0.5) and not budgets.allow(GUESSER, 0.5)
    granted = sum(budgets.allow(GUESSER, t / 100) for t in range(100, 1100))
    assert granted == pytest.approx(20, abs=1)  # ten seconds at two a second


def test_key_exchange_budgets_forget_refilled_addresses_and_overflow_when_full() -> None:
    budgets = HandshakeBudgets(rate=1.0, burst=2, capacity=2)
    assert budgets.allow("a", 0.0) and budgets.allow("b", 0.0)
    assert budgets.allow("c", 0.0) and budgets.allow("d", 0.0)  # both share the overflow
    assert not budgets.allow("e", 0.0)
    assert len(budgets) == 2
    assert budgets.allow("f", 10.0)  # a and b have refilled: forgotten, f has a bucket
    assert len(budgets) == 1


def test_the_pool_turns_away_one_too_many_from_an_address() -> None:
    pool: StrangerPool[str] = StrangerPool(total=10, per_address=2)
    assert pool.admit("c1", GUESSER) == (True, None)
    assert pool.admit("c2", GUESSER) == (True, None)
    assert pool.admit("c3", GUESSER) == (False, None)
    assert pool.admit("j1", JOINER) == (True, None)
    pool.release("c1")
    assert pool.admit("c4", GUESSER) == (True, None)
    assert len(pool) == 3 and "c1" not in pool


def test_one_too_many_in_all_displaces_the_oldest_stranger_not_a_shielded_one() -> None:
    """A returning member names a known peer id in its hello and is shielded: a flood from many
    addresses displaces the oldest strangers, not it."""
    pool: StrangerPool[str] = StrangerPool(total=3, per_address=3)
    pool.admit("member", MEMBER)
    pool.shield("member")
    pool.admit("s1", "10.0.3.1")
    pool.admit("s2", "10.0.3.2")
    pool.admit("s3", "10.0.3.3")
    assert pool.admit("s4", "10.0.3.4") == (True, "s1")
    assert pool.admit("s5", "10.0.3.5") == (True, "s2")
    assert "member" in pool and len(pool) == 4  # three strangers and the shielded member
    pool.release("member")
    assert "member" not in pool and pool.admit("s6", MEMBER) == (True, "s3")
