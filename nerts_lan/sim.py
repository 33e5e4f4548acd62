"""Placeholder until the bots land: `nerts-lan sim` (issue 3)."""

from __future__ import annotations

import argparse

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", default="nerts")


def run(args: argparse.Namespace) -> int:
    raise SystemExit("nerts-lan sim: error: the simulator is not built yet")
