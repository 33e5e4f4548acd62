"""The named fault generators: a sample of seeds of each must keep stable final and end as one
table, with every seed that ever failed; those that still fail are strict xfails (issue 14)."""

from __future__ import annotations

import json

import pytest

from nerts_lan.lab.faults.generators import GENERATORS, MALICIOUS, run_generator
from nerts_lan.lab.faults.run import FAST_TIMERS

pytestmark = pytest.mark.sim

# Seeds that failed before membership was decided by quorum ballots (sweeps outside the suite of
# seeds 0-119 of each generator and 0-19 of partners12, `nerts-lan faults NAME --seeds 0-119`):
# a few of each kind per generator, kept as ordinary seeds.
FAILED_BEFORE: dict[str, list[int]] = {
    # a stable entry undone (3), tentative entries never stable (34), a core spinning (78)
    # issue 24: a snapshot relabelled with the epoch of a later request at the same stable
    # index (one stable index, two states: 340, 3064, 3143)
    # 30076 (issue 24's 50-minute sweep): the lowest of two decided its own removal alone, the
    # decision never reached the other, and the restarted laptop's vote record named the epoch
    # after it, so it never voted in the one the other was stuck in; passes since a member that
    # decides its own removal hands on its vote of that epoch
    # 80375 (issue 24's eleventh stop, the hour's sweep; forked on the tree before it): a
    # change re-decided with a restarted incarnation as the one other voter, which holds
    # none of the removed member's entries (`hands_on` in net/_order/viewchange.py)
    # 110903 (issue 24's twelfth stop, the hour's sweep; it failed on the tree before that stop
    # too): one ballot removed three of four members, and its three acceptors were exactly
    # those three; the one kept never heard of it (the deciders rejoined as new incarnations
    # that knew nothing of it) and waited in the old view for good, admitting nobody. Passes
    # since a change that keeps members is decided only once one of them accepted it
    "stalls": [3, 34, 43, 78, 340, 3064, 3143, 30076, 80375, 110903],
    # every member gone (1), a member left outside (20), a wedged change: two states (29),
    # nothing stable again (74)
    "duplicates": [1, 20, 29, 74],
    # a resumed member delivered the epoch that removed it the other way round (14, 68); a
    # stable entry undone (33)
    "pauses": [14, 33, 68],
    # the table went extinct: every laptop ended as a joiner with nobody to admit it (1, 2)
    # issue 24's "everyone restarting at once": every laptop that held the state restarted
    # before the one member left got its snapshot; it may not propose without one, so the
    # laptops ended outside the table (316, 3087, 3131, 5012; 3189 too, found by the sweep of
    # 3000-3199 that checked the fix). Pass since that member takes the longest stable prefix
    # the restarted laptops kept on disk ("Recovery from durable prefixes" in docs/protocol.md)
    # 80196 (issue 24's eleventh stop, the hour's sweep): every laptop of a 4-laptop view
    # restarted, one after another; the change that put p00's new incarnation in its place was
    # accepted by a quorum 3 ms before its proposer died, so nobody decided it, and the one
    # member left died before its retry: four joiners, each with its predecessor's vote and
    # stable prefix, and none might propose. Passes since a joiner whose predecessor's record
    # names its view runs that view's ballot in its place once every place has restarted
    # (`net._order.orphan`), and the laptop it adds recovers from the prefixes
    "rolling": [1, 2, 316, 3087, 3131, 5012, 3189, 80196],
    # 334, 363: two of three (or the lowest of two) killed for good; the survivor must wait,
    # paused, without a fork (issue 24: judged as a quorum lost, not as a table that split)
    # 5035: a restarted laptop's vote in its dead predecessor's place was stamped before the
    # marker of the change it carried, so the one member left refused it and waited for good
    # 50148, 50196 (this stop's hour): the lowest of three killed for good and another left on
    # purpose; the one left is no quorum (the leaver's restarted successor has no vote: it left),
    # and the run called that a table that ended apart. It is a quorum lost (the harness now
    # leaves the members that left out of the quorum it checks, as the core does)
    "churn": [12, 49, 334, 363, 5035, 50148, 50196],
    "frozen-seen": [48],
    "sparse": [116],
    # issue 24: a joiner decided epochs with the others while a member's welcome was on its way,
    # never sent that member those decisions, and it waited in its old view for ever (677)
    "partial": [677],
    # a core spinning on a past timer (0); stable entries undone (6)
    # 203: forked at issue 23's stop; passes since the app folds ties in the core's order and
    # the cut counts only what the quorum can hand on (issue 24)
    # 250, 253, 3013, 3086, 3110 forked unsigned; the runs sign since issue 24 (as the game
    # does: a relayed entry without its author's proof is refused) and they pass
    # 29, 71 forked signed: a forged ballot claimed a third party left, with a cut of the
    # liar's choosing; pass since a leave needs the leaver's signed notice (issue 24)
    # 42, 57, 193, 352 forked unsigned in a 15-minute budget sweep (seeds 0-430); pass signed
    "forged": [0, 6, 10, 203, 250, 253, 3013, 3086, 3110, 29, 71, 42, 57, 193, 352],
    # issue 24: every seed forked (each half of the table stabilised its own entry of the
    # equivocator at one key: 0 and 1 were strict xfails, 3000-4999 a 3,236-seed sweep); pass
    # since every frame carries digests of each author's entries and a mismatch leads to a
    # two-entry proof (seeds 0-99 swept)
    "equivocate": [0, 1, 3000, 3001, 4999],
    # issue 24: a long one-way delay looked like a clock held back (no round trip closed while
    # the receiver was frozen in a view change): both ends convicted each other and one laptop
    # waited for good in a view the other left (28, 3008, 420), or diverged (3204). They pass
    # since lateness is judged against each frame's own round trip and a clock verdict needs a
    # majority.
    "asymmetric": [28, 3008, 3204, 420],
}

# Seeds that still fail, as strict xfails: once fixed, they pass and the mark must go.
FAILING_TODAY: dict[str, list[int]] = {}

# Seeds that failed with the real timers, kept as ordinary seeds.
# equivocate 30037 (issue 24's 50-minute sweep): the equivocator was removed with a cut above its
# two-faced entry before any proof went round, and each half of the table stabilised its own
# version at stable index 409. Passes since the view change carries the version every survivor
# stabilises (`OrderedLog.adopt`).
# partners12 100048 (issue 24's twelfth stop, its hour's sweep): a fork. p10's third
# incarnation joined at epoch 12 (marker at stable index 314) while p00 and p11 still held a
# snapshot request of its second incarnation (joined at epoch 7, marker at 311). Both served it
# to the newcomer: p00 a snapshot of epoch 7 (refused as a violation, so p00's right one after it
# was ignored), p11 merged it with its push and labelled its epoch-12 snapshot with the epoch-7
# anchor, 311. p10 installed that, placed the epoch-13 marker at 311, and took three entries
# after that marker for entries before its snapshot: 130 stable entries told differently.
# Passes since a waiting request is served only to the incarnation that asked, and a joiner
# ignores a snapshot of an epoch before its own.
FAILED_BEFORE_REAL: dict[str, list[int]] = {"equivocate": [30037], "partners12": [100048]}


@pytest.mark.parametrize(
    ("name", "seed"),
    [(name, seed) for name, seeds in FAILED_BEFORE_REAL.items() for seed in seeds],
)
def test_with_the_real_timers_stable_is_final_and_the_table_ends_as_one(
    name: str, seed: int
) -> None:
    result = run_generator(name, seed, real_timers=True)
    assert not result.failed, json.dumps(result.to_json(), indent=1)


SAMPLE: dict[str, list[int]] = {name: [0, 1] for name in GENERATORS}
SAMPLE.update({"duplicates": [0, 2], "rolling": [0, 9], "forged": [1, 2], "equivocate": []})
SAMPLE["partners12"] = [0]  # 12 laptops: 5 s a seed


def _cases() -> list[object]:
    cases: list[object] = []
    for name in GENERATORS:
        failing = FAILING_TODAY.get(name, [])
        seeds = SAMPLE[name] + FAILED_BEFORE.get(name, [])
        cases += [pytest.param(name, seed, id=f"{name}-{seed}") for seed in seeds]
        cases += [
            pytest.param(
                name,
                seed,
                id=f"{name}-{seed}",
                marks=pytest.mark.xfail(strict=True, reason="issue 24: does not end as one yet"),
            )
            for seed in failing
        ]
    return cases


@pytest.mark.parametrize(("name", "seed"), _cases())
def test_under_every_generator_stable_is_final_and_the_table_ends_as_one(
    name: str, seed: int
) -> None:
    result = run_generator(name, seed)
    assert result.events > 0
    assert result.stable_entries > 20, "the bots played"
    assert not result.failed, json.dumps(result.to_json(), indent=1)
    if name in MALICIOUS:
        assert result.malicious and result.malicious[0] in {f"p{i:02d}" for i in range(5)}


def test_a_member_that_froze_stabilises_nothing_beyond_what_it_froze() -> None:
    """Asymmetric seed 28 forked: a member kept receiving a slow peer's frames after freezing for
    a view change, stabilised one of its entries, and the decided cut (from what it froze) then
    retracted it. Its table still ends split by a false clock verdict (strict xfail above)."""
    result = run_generator("asymmetric", 28)
    assert result.forks == 0, result.findings


def test_a_run_is_the_same_for_the_same_seed() -> None:
    assert run_generator("churn", 3).to_json() == run_generator("churn", 3).to_json()


# Rolling restarts with the real timers (issue 14's field report: five laptops, each down 1.6 s,
# 1.5 s apart): 25 of the seeds 0-39 ended with no table before quorum ballots (every laptop a
# joiner, nobody to admit it); the first two stay here.
EXTINCT_BEFORE = [1, 2]


@pytest.mark.parametrize("seed", [0, *EXTINCT_BEFORE])
def test_rolling_restarts_with_the_real_timers_leave_a_live_table(seed: int) -> None:
    result = run_generator("rolling", seed, real_timers=True)
    assert result.timers == "real"
    assert not result.failed, json.dumps(result.to_json(), indent=1)


def test_a_quorum_killed_for_good_is_told_apart_from_a_table_that_goes_on() -> None:
    lost = run_generator("churn", 334)  # two of three founders killed, never back
    assert lost.quorum_lost and not lost.final_agreement and not lost.failed
    assert lost.forks == 0 and lost.divergences == 0
    whole = run_generator("churn", 12)
    assert whole.final_agreement and not whole.quorum_lost


def test_the_fault_runs_sign_like_the_real_game_and_a_liar_signs_its_lies() -> None:
    """Every laptop of a malicious run has a key, as in the real game; an equivocating member
    signs the other payload it sends with its own key (a real cheater would), so nobody refuses
    its frames for a bad proof: the lie is another entry under a right proof."""
    table = GENERATORS["equivocate"](0, FAST_TIMERS)
    assert all(node.identity is not None for node in table.sim.nodes.values())
    result = table.run()
    assert result.events > 1, "the member lied"
    assert "action.proof" not in result.violations


def test_a_forged_decision_expulsion_or_leave_claim_changes_nothing() -> None:
    """The liar's decisions removing a member and its expulsions of the receiver carry only its
    own vote, its ballots claim that a third party left without that party's signed notice:
    every honest member refuses each (and says so) and nobody honest is excluded."""
    result = run_generator("forged", 2)
    assert not result.failed
    assert result.honest_excluded == 0
    refused = set(result.violations)
    assert {"decide.certificate", "expel.certificate", "accept.removals"} <= refused


# Seeds where an honest laptop flagged an honest one's clock (issue 24's sweep of seeds
# 20,000-20,175 of each generator: 10 flags in stalls, 4 in asymmetric). A laptop took its table
# time from the first round trip of a reference newly in sight (or, rejoining as the lowest, from
# its first round trip to anyone) while that frame had waited in a stalled or slow link: hundreds
# of ms off, its stamps lagged (or the others' looked late) by far more than the bound. They flag
# nothing since a worse round trip only narrows what a better one allows (`TableClock._settle`).
# Stalls 20036: a laptop whose every round trip to the reference took 120 ms or more while its
# links to the others froze in view changes (a frozen member's ``seen`` reports our frame from
# before the freeze: no round trip closed): its clock was 59 ms behind, within what it could
# know, and a member with short round trips to it flagged it. Flags nothing since every frame
# echoes the latest frame of each peer its ``seen`` does not report (``ec``).
HONEST_FLAGGED_BEFORE: dict[str, list[int]] = {
    "stalls": [20020, 20027, 20040, 20062, 20138, 20036],
    "asymmetric": [20132, 20154],
}

# Still flagged (strict xfails). A flag convicts nobody; it is shown to the players.
HONEST_FLAGGED_TODAY: dict[str, list[int]] = {}


def _flag_cases() -> list[object]:
    cases: list[object] = []
    for name, seeds in HONEST_FLAGGED_BEFORE.items():
        cases += [pytest.param(name, seed, id=f"{name}-{seed}") for seed in seeds]
    for name, seeds in HONEST_FLAGGED_TODAY.items():
        mark = pytest.mark.xfail(strict=True, reason="issue 24: an honest clock is flagged")
        cases += [pytest.param(name, seed, id=f"{name}-{seed}", marks=mark) for seed in seeds]
    return cases


@pytest.mark.parametrize(("name", "seed"), _flag_cases())
def test_no_honest_clock_is_flagged_or_accused(name: str, seed: int) -> None:
    result = run_generator(name, seed)
    assert not result.failed, json.dumps(result.to_json(), indent=1)
    assert result.honest_accused == 0, "no honest laptop holds clock grounds on another"
    assert result.honest_flagged == 0


def test_the_delay_line_cheater_is_flagged_and_no_honest_clock_is() -> None:
    """Every frame of the clock holder leaves 5-150 ms late: the honest members flag its clock
    (``ClockSuspected``), and none of them flags another honest one's (the sweep counts both;
    a flag is never a ground for removal by itself)."""
    result = run_generator("clock-holder", 1)
    assert not result.failed
    assert result.malicious_flagged >= 1
    assert result.honest_flagged == 0 and result.honest_excluded == 0
    assert result.honest_accused == 0
