"""The named fault generators: a sample of seeds of each must keep stable final and end as one
table, with every seed that ever failed; those that still fail are strict xfails (issue 14)."""

from __future__ import annotations

import json

import pytest

from nerts_lan.faults import GENERATORS, MALICIOUS, run_generator

pytestmark = pytest.mark.sim

# Seeds that failed before membership was decided by quorum ballots (sweeps outside the suite of
# seeds 0-119 of each generator and 0-19 of partners12, `nerts-lan faults NAME --seeds 0-119`):
# a few of each kind per generator, kept as ordinary seeds.
FAILED_BEFORE: dict[str, list[int]] = {
    # a stable entry undone (3), tentative entries never stable (34), a core spinning (78)
    "stalls": [3, 34, 43, 78],
    # every member gone (1), a member left outside (20), a wedged change: two states (29),
    # nothing stable again (74)
    "duplicates": [1, 20, 29, 74],
    # a resumed member delivered the epoch that removed it the other way round (14, 68); a
    # stable entry undone (33)
    "pauses": [14, 33, 68],
    # the table went extinct: every laptop ended as a joiner with nobody to admit it
    "rolling": [1, 2],
    "churn": [12, 49],
    "frozen-seen": [48],
    "sparse": [116],
    # a core spinning on a past timer (0); stable entries undone (6)
    "forged": [0, 6, 10],
}

# Seeds that still fail: members are trusted with what they sign nothing for (a forged decision
# is applied: 29), and an author may tell different members different entries under one key
# (every equivocation seed). Issue 14's signed ballots and entry digests fix them. And a long
# one-way delay looks like a clock held back: both ends of it flag each other and one waits for
# good in a view the other left (asymmetric 28). strict: once fixed, they pass and the mark must go.
FAILING_TODAY: dict[str, list[int]] = {
    # 3013, 3086, 3110: forged ballots fork the table (a 3,236-seed sweep of seeds 3000-4999
    # of every generator, at issue 15's stop; every equivocate seed of it failed too)
    "forged": [29, 3013, 3086, 3110],
    "equivocate": [0, 1],
    # 3008, 3204 (same sweep): false clock verdicts leave two views, and 3204 one divergence
    "asymmetric": [28, 3008, 3204],
    # a 1,000-seed sweep of 120-1119 after quorum ballots: the host ends outside the table
    "partial": [677],
    # same sweep: the laptops end outside the table (no fork); 5012 from a 100-seed sample at
    # issue 22's stop (the core untouched: issue 24's "everyone restarting at once")
    "rolling": [3087, 3131, 5012],
    # a 100-seed sample of 5000-5099 at issue 22's stop: no final agreement (no fork)
    "churn": [5035],
    # same sweep: one stable index, two states at one member (a divergence, no fork)
    "stalls": [3064, 3143],
}

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
                marks=pytest.mark.xfail(strict=True, reason="issue 14: stable is not final yet"),
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
