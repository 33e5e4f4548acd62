"""``nerts-lan sounds``: render the table's sounds to WAV files and print their lengths and
levels (how they are checked on a machine with no speaker, and how a player tries them)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from nerts_lan.usage import UsageError

__all__ = ["register", "run_sounds"]


def register(subcommands: Any) -> None:
    """Add the ``sounds`` subcommand to the ``nerts-lan`` parser."""
    parser = subcommands.add_parser(
        "sounds",
        help="write the game's sounds as WAV files and print their lengths and levels",
        description=(
            "Renders every sound the table plays (flip, a card onto a work pile, a foundation "
            "play, someone else's, a refusal, a lost race, the Nerts call, the suit callouts) "
            "and prints each one's length, peak and loudness in dB of full scale."
        ),
    )
    parser.add_argument(
        "--out", default=None, metavar="FOLDER", help="write <name>.wav files into FOLDER"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(command="sounds", run=run_sounds)


def run_sounds(args: argparse.Namespace) -> int:
    """Print the sounds' figures (and write them with ``--out``); 0, or a usage error."""
    from ui.kit.soundbank import SOUND_NAMES, levels, render, write_all

    if args.out is not None:
        folder = Path(args.out)
        if folder.exists() and not folder.is_dir():
            raise UsageError("sounds", f"--out {args.out!r} is not a folder")
        try:
            write_all(folder)
        except OSError as error:
            raise UsageError(
                "sounds", f"cannot write into {args.out!r}: {error.strerror}"
            ) from None
    figures = {}
    for name in SOUND_NAMES:
        measured = levels(render(name))
        figures[name] = {
            "length_ms": round(measured.length_ms, 1),
            "peak_dbfs": round(measured.peak_dbfs, 1),
            "loudness_dbfs": round(measured.rms_dbfs, 1),
        }
    if args.json:
        print(json.dumps(figures, sort_keys=False))
        return 0
    print(f"{'sound':18} {'length':>8} {'peak':>8} {'loudness':>9}")
    for name, row in figures.items():
        print(
            f"{name:18} {row['length_ms']:>6.0f}ms {row['peak_dbfs']:>6.1f}dB "
            f"{row['loudness_dbfs']:>7.1f}dB"
        )
    return 0
