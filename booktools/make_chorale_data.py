"""Regenerate rnnlib/_data/chorales_music21.npz from music21's Bach chorales (chapter 11).

Usage (from the repository root; takes a few minutes, needs only music21, offline):

    .venv/bin/python -m booktools.make_chorale_data [--seed 0] [--out PATH]

The protocol (quarter-note frames, transposition to C major / C minor, 88 keys,
a seeded 60/20/20 split by chorale) is documented in rnnlib/data.py; the test
tests/test_data.py re-parses a sample of chorales and compares with the file.
"""

from __future__ import annotations

import argparse

from rnnlib.data import (
    CHORALE_FILE,
    build_chorales,
    load_chorales,
    save_chorales,
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the train/valid/test split (default 0)",
    )
    parser.add_argument(
        "--out",
        default=str(CHORALE_FILE),
        help="output .npz (default: the shipped file)",
    )
    args = parser.parse_args()
    path = save_chorales(
        build_chorales(generator=args.seed), args.out
    )
    data = load_chorales(path)
    sizes = {
        s: len(data.split(s)) for s in ("train", "valid", "test")
    }
    print(
        f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB): {sizes}"
    )


if __name__ == "__main__":
    main()
