"""The ``nerts-lan`` command: one composition root for the engine, bots, network and window.

It owns every option of every subcommand (``parser``, the rules' options once in ``rules``), turns
them into typed configs and hands those to the front ends (``commands``): the headless peers, the
simulator, the window. Every subcommand checks its arguments and its input files as hostile: a
problem is a ``UsageError``, which exits 2 with one line on standard error that names it, never a
traceback.
"""
