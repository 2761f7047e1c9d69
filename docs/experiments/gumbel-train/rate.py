#!/usr/bin/env python3
"""The checkpoints of the three runs and their ratings.

  rate.py DIR                       one line per match: NAME CHECKPOINT.onnx ANCHOR.onnx
  rate.py DIR --table [--svg FILE]  the Markdown table of the results (and the plot)

A checkpoint is the run's best model after the last iteration that ended by that minute; the
anchor is the PUCT run's final best. A rating is the Elo difference to the anchor."""
import math
import os
import re
import sys

import yaml

RUNS = [("puct", "PUCT, 200/40 visits"), ("g16", "Gumbel, 16"), ("g32", "Gumbel, 32")]
MARKS = [6, 9, 12, 15, 18, 21, 25]  # minutes of wall time; 25 is after every run's last iteration
FLOOR = -800  # Elo drawn at the plot's bottom edge when a checkpoint scored nothing


def best_at(dir, run, minutes):
    with open(os.path.join(dir, run, "state.yaml"), encoding="utf-8") as f:
        state = yaml.safe_load(f)
    best = 0
    for h in state["history"]:
        if h["elapsed_seconds"] > minutes * 60:
            break
        best = h["candidate"] if h["promoted"] else h["best_before"]
    return best


def onnx(dir, run, n):
    return os.path.join(dir, run, "models", f"{n:04}.onnx")


def elo(score):
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return 400 * math.log10(score / (1 - score))


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
    return tuple(map(int, wdl[-1])) + tuple(map(float, score.groups()))


def plot(points, path):
    w, h, left, right, top, bottom = 640, 400, 60, 150, 20, 40
    lo, hi = FLOOR, 300
    x = lambda m: left + (w - left - right) * m / 25
    y = lambda e: top + (h - top - bottom) * (hi - max(lo, min(hi, e))) / (hi - lo)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    for e in range(lo, hi + 1, 100):
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{y(e):.1f}" y2="{y(e):.1f}" '
                   f'stroke="#ddd"/><text x="{left - 6}" y="{y(e) + 4:.1f}" '
                   f'text-anchor="end">{e}</text>')
    for m in range(0, 26, 5):
        out.append(f'<text x="{x(m):.1f}" y="{h - bottom + 16}" text-anchor="middle">{m}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 6}" text-anchor="middle">'
               'minutes of training (2 cores)</text>')
    out.append(f'<text x="14" y="{(top + h - bottom) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 14 {(top + h - bottom) / 2})">Elo against the PUCT '
               'run\'s final model</text>')
    colours = {"puct": "#1f77b4", "g16": "#d62728", "g32": "#2ca02c"}
    for k, (run, label) in enumerate(RUNS):
        pts = points[run]
        c = colours[run]
        path_d = " ".join(f'{"M" if i == 0 else "L"}{x(m):.1f},{y(e):.1f}'
                          for i, (m, e, _, _) in enumerate(pts))
        out.append(f'<path d="{path_d}" fill="none" stroke="{c}" stroke-width="2"/>')
        for m, e, elo_lo, elo_hi in pts:
            out.append(f'<line x1="{x(m):.1f}" x2="{x(m):.1f}" y1="{y(elo_lo):.1f}" '
                       f'y2="{y(elo_hi):.1f}" stroke="{c}"/>'
                       f'<circle cx="{x(m):.1f}" cy="{y(e):.1f}" r="3" fill="{c}"/>')
        ly = top + 20 + 18 * k
        out.append(f'<line x1="{w - right + 10}" x2="{w - right + 30}" y1="{ly}" y2="{ly}" '
                   f'stroke="{c}" stroke-width="2"/><text x="{w - right + 35}" y="{ly + 4}">'
                   f'{label}</text>')
    out.append('</svg>')
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main():
    dir = sys.argv[1]
    anchor = best_at(dir, "puct", MARKS[-1])
    rows = [(run, m, best_at(dir, run, m)) for run, _ in RUNS for m in MARKS
            if not (run == "puct" and m == MARKS[-1])]
    if "--table" not in sys.argv:
        for run, m, n in rows:
            print(f"{run}-{m} {onnx(dir, run, n)} {onnx(dir, 'puct', anchor)}")
        return
    print("| run | minutes | best model | against the anchor (W-D-L) | score, 95 % interval | Elo |")
    print("|---|---|---|---|---|---|")
    points = {run: [] for run, _ in RUNS}
    for run, m, n in rows:
        r = result(dir, f"{run}-{m}")
        if r is None:
            print(f"| {run} | {m} | {n:04} | not played | | |")
            continue
        wins, draws, losses, score, low, high = r
        print(f"| {run} | {m} | {n:04} | {wins}-{draws}-{losses} | {score:.3f} [{low:.3f}, "
              f"{high:.3f}] | {elo(score):+.0f} |")
        points[run].append((m, elo(score), elo(low), elo(high)))
    print(f"| puct | 25 | {anchor:04} | the anchor | 0.500 | 0 |")
    points["puct"].append((MARKS[-1], 0.0, 0.0, 0.0))
    if "--svg" in sys.argv:
        plot(points, sys.argv[sys.argv.index("--svg") + 1])


if __name__ == "__main__":
    main()
