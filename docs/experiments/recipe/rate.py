#!/usr/bin/env python3
"""The matches of the recipe comparison and their table.

  rate.py DIR MINUTES SEED...           one line per match: NAME BLACK_SPEC WHITE_SPEC
  rate.py DIR MINUTES SEED... --table   the Markdown table of the finished ones, and their
                                        plot in DIR/rate/scores.svg

A run's checkpoint at minute m is its best model after the last iteration that ended by then.
Each recipe's checkpoints play the other recipe's final best of the same seed; every final best
plays an outside player: in Liuzhou the engine's alpha-beta at 100 ms a move, the networks at
100 ms; in Go GNU Go at level 10, the finals at 1 s a move and the checkpoints at 0.5 s. From the
environment: GAME (liuzhou or go) and RECIPES, the two recipes compared ("base kata")."""
import os
import re
import sys

import yaml

RECIPES = os.environ.get("RECIPES", "base kata").split()
assert len(RECIPES) == 2, "RECIPES names two recipes"
GNUGO = "gtp:cmd=gnugo --mode gtp --chinese-rules --positional-superko --capture-all-dead"
# Per game: a checkpoint's spec against the other recipe's final, a final's against the outside
# player, that player, its matches' name suffix and its name in the table.
SETUPS = {
    "liuzhou": ("net:model={},time=0.1,batch=16", "net:model={},time=0.1,batch=16",
                "alphabeta:movetime=100", "alphabeta", "alpha-beta, 100 ms"),
    "go": ("net:model={},time=0.5,batch=8", "net:model={},time=1,batch=8",
           GNUGO + " --level 10", "gnugo", "GNU Go level 10"),
}
NET, FINAL_NET, OUTSIDE, OUTSIDE_NAME, OUTSIDE_LABEL = SETUPS[os.environ.get("GAME", "liuzhou")]


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
            yield (f"{r}-s{seed}-{OUTSIDE_NAME}",
                   FINAL_NET.format(onnx(dir, f"{r}-s{seed}", final[r])), OUTSIDE)


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


def plot(dir, minutes, rows):
    """DIR/rate/scores.svg: each recipe's score against the other's final by CPU minutes of
    training, one line per run, the 95 % intervals as bars (hand-written SVG: no plotting
    package needed)."""
    width, height, left, bottom, top, right = 560, 340, 50, 40, 20, 120
    x = lambda m: left + (width - left - right) * m / minutes
    y = lambda s: top + (height - top - bottom) * (1 - s)
    colours = {"base": "#1f77b4", "kata": "#d62728", "int8": "#2ca02c"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for s in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(s)}" y2="{y(s)}" '
                   f'stroke="#ddd"/><text x="{left - 6}" y="{y(s) + 4}" '
                   f'text-anchor="end">{s}</text>')
    for k in range(5):
        m = minutes * k // 4
        out.append(f'<text x="{x(m)}" y="{height - bottom + 16}" text-anchor="middle">{m}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 6}" text-anchor="middle">'
               "CPU minutes of training</text>")
    lines = {}
    for name, _, _ in rows:
        found = re.fullmatch(r"(\w+)-s(\d+)-m(\d+)", name)
        r = result(dir, name)
        if found and r:
            lines.setdefault(found.group(1, 2), []).append((int(found.group(3)), r))
    for i, ((recipe, seed), points) in enumerate(sorted(lines.items())):
        colour = colours.get(recipe, "black")
        dash = "" if seed == "1" else ' stroke-dasharray="5,3"'
        path = " ".join(f"{x(m)},{y(r[3])}" for m, r in sorted(points))
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}"{dash}/>')
        for m, r in points:
            out.append(f'<line x1="{x(m)}" x2="{x(m)}" y1="{y(r[4])}" y2="{y(r[5])}" '
                       f'stroke="{colour}"/>')
        out.append(f'<text x="{width - right + 8}" y="{top + 14 * (i + 1)}" fill="{colour}">'
                   f"{recipe}, seed {seed}</text>")
    out.append("</svg>")
    with open(os.path.join(dir, "rate", "scores.svg"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


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
        opponent = OUTSIDE_LABEL if white == OUTSIDE else "the other recipe's final"
        print(f"| {name} | {opponent} | {r[0]}-{r[1]}-{r[2]} | {r[3]:.3f} [{r[4]:.3f}, {r[5]:.3f}] |")
    plot(dir, minutes, rows)


if __name__ == "__main__":
    main()
