#!/usr/bin/env python3
"""The matches of the recipe comparison and their table.

  rate.py DIR MINUTES SEED...           one line per match: NAME BLACK_SPEC WHITE_SPEC
  rate.py DIR MINUTES SEED... --table   the Markdown table of the finished ones

A run's checkpoint at minute m is its best model after the last iteration that ended by then.
Each recipe's checkpoints play the other recipe's final best of the same seed; every final best
plays the engine's alpha-beta at 100 ms a move."""
import os
import re
import sys

import yaml

RECIPES = ["base", "kata"]
NET = "net:model={},time=0.1,batch=16"
ALPHABETA = "alphabeta:movetime=100"


def best_at(dir, run, seconds):
    with open(os.path.join(dir, run, "state.yaml"), encoding="utf-8") as f:
        state = yaml.safe_load(f)
    best = 0
    for h in state.get("history") or []:
        if h["elapsed_seconds"] > seconds:
            break
        best = h["candidate"] if h["promoted"] else h["best_before"]
    return best


def onnx(dir, run, n):
    return os.path.join(dir, run, "models", f"{n:04}.onnx")


def matches(dir, minutes, seeds):
    marks = sorted({minutes * k // 4 for k in (1, 2, 3)} | {minutes})
    for seed in seeds:
        final = {r: best_at(dir, f"{r}-s{seed}", minutes * 60 + 3600) for r in RECIPES}
        for r in RECIPES:
            other = RECIPES[1 - RECIPES.index(r)]
            anchor = onnx(dir, f"{other}-s{seed}", final[other])
            for m in marks:
                n = best_at(dir, f"{r}-s{seed}", m * 60)
                yield (f"{r}-s{seed}-m{m}", NET.format(onnx(dir, f"{r}-s{seed}", n)),
                       NET.format(anchor))
            yield (f"{r}-s{seed}-alphabeta", NET.format(onnx(dir, f"{r}-s{seed}", final[r])),
                   ALPHABETA)


def result(dir, name):
    """(wins, draws, losses, score, low, high) of a finished match, or None."""
    try:
        with open(os.path.join(dir, "rate", f"{name}.log"), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    wdl = re.findall(r"(\d+) wins, (\d+) draws, (\d+) losses", text)
    score = re.search(r"^score ([0-9.]+) .*interval \[([0-9.]+), ([0-9.]+)\]", text, re.M)
    if not (wdl and score):
        return None
    # The first count is the whole match's; the ones after it are by colour.
    return tuple(map(int, wdl[0])) + tuple(map(float, score.groups()))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dir, minutes, seeds = args[0], int(args[1]), args[2:]
    rows = list(matches(dir, minutes, seeds))
    if "--table" not in sys.argv:
        for name, black, white in rows:
            print(name, black, white)
        return
    print("| run | opponent | W-D-L | score [95 % interval] |")
    print("|---|---|---|---|")
    for name, _, white in rows:
        r = result(dir, name)
        if r is None:
            continue
        opponent = "alpha-beta, 100 ms" if white == ALPHABETA else "the other recipe's final"
        print(f"| {name} | {opponent} | {r[0]}-{r[1]}-{r[2]} | {r[3]:.3f} [{r[4]:.3f}, {r[5]:.3f}] |")


if __name__ == "__main__":
    main()
