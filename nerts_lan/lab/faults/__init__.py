"""Named fault generators over the simulator, and the stable-is-final oracle that judges them.

Every generator builds, from a seed, a table of simulated laptops running the real table peer
(``nerts_lan.lab.simgame``: the table fold, its duties, the lobby and bots) on
``net.testing.simnet``, schedules its faults, runs them, then a healing period of a perfect network,
and returns a `FaultResult`: forks (a stable entry undone, reordered or told differently),
divergences (one stable index, two states), whether the table ended as one (final agreement), the
worst stall of stability at a member with actions pending, and the honest members that were
excluded::

    result = generators.run_generator("partial", 839)
    result.failed, result.to_json()

``nerts-lan faults GENERATOR --seeds A-B`` runs one over a range of seeds.
"""
