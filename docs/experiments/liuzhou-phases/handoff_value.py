#!/usr/bin/env python3
"""What a player's games were worth where a handoff takes over, and how they ended.

    handoff_value.py SUBJECT K RECORD... [--values N]

SUBJECT is text in the player's name as the records' Black/White tags give it (`net(`).
Each game of the records (`engine match --record`) is replayed through `engine gtp --game
liuzhou` ($ENGINE, else `engine` on the PATH) to the first position where `handoff=K` hands
the game to alpha-beta (K or fewer empty points in the placement, or the placement over).
There the network's search (`engine analyse`, N playouts, 800 by default, the default
network) values the position from SUBJECT's side. Prints, for each colour of SUBJECT, the
games by that value, with their score: whether the network's value there foretells how the
alpha-beta part of the game ends.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placement_end import Gtp, subject_games, value  # noqa: E402

BANDS = ((-1.0, -0.2), (-0.2, 0.2), (0.2, 0.5), (0.5, 1.0))


def empty_points(lfen):
    """Empty points of an LFEN's board (its digits count runs of them)."""
    return sum(int(c) for c in lfen.split()[0] if c.isdigit())


def main():
    args = sys.argv[1:]
    playouts = 800
    if "--values" in args:
        i = args.index("--values")
        playouts = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 3:
        raise SystemExit(__doc__)
    subject, k, paths = args[0], int(args[1]), args[2:]
    gtp = Gtp()
    rows = []
    for colour, score, tags, actions in subject_games(paths, subject):
        gtp.ask("liuzhou-set-lfen " + tags["StartLFEN"])
        handed = None
        for action in actions:
            lfen = gtp.ask("liuzhou-lfen")
            if lfen.split()[2] not in ("place", "mark") or empty_points(lfen) <= k:
                handed = lfen
                break
            gtp.ask(f"play {gtp.ask('liuzhou-to-move')} {action}")
        if handed is not None:
            rows.append((colour, value(handed, playouts, colour), score))
    for colour in ("black", "white"):
        mine = [(v, s) for c, v, s in rows if c == colour]
        if not mine:
            continue
        print(f"{colour}: {len(mine)} games, {sum(s for _, s in mine) / len(mine):.3f}")
        for lo, hi in BANDS:
            band = [s for v, s in mine if lo <= v < hi or (hi == 1.0 and v == 1.0)]
            if band:
                print(f"  value {lo:+.1f} to {hi:+.1f}: {len(band)} games, "
                      f"{sum(band) / len(band):.3f} ({band.count(0.0)} lost, "
                      f"{band.count(0.5)} drawn)")


if __name__ == "__main__":
    main()
