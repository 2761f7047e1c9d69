#!/usr/bin/env python3
"""Writes the three runs' configs: Liuzhou's shipped config with the ladder off (every run is
rated afterwards by the same matches), a time limit, and each run's search and budget."""
import os
import re
import sys

MINUTES = 24
RUNS = {
    "puct": {"search": "puct", "full_visits": "200", "cheap_visits": "40", "full_fraction": "0.25"},
    "g16": {"search": "gumbel", "full_visits": "16", "cheap_visits": "16", "full_fraction": "1.0"},
    "g32": {"search": "gumbel", "full_visits": "32", "cheap_visits": "32", "full_fraction": "1.0"},
}


def set_key(text, key, value):
    new, n = re.subn(rf"(?m)^(  {key}:) .*$", rf"\g<1> {value}", text)
    if n != 1:
        sys.exit(f"{key}: found {n} times in the config, expected once")
    return new


def main():
    source, out = sys.argv[1], sys.argv[2]
    base = open(source, encoding="utf-8").read()
    common = {"eval_games": "0", "iterations": "1000", "time_limit_minutes": str(MINUTES)}
    for run, keys in RUNS.items():
        text = base
        for key, value in {**common, **keys}.items():
            text = set_key(text, key, value)
        # Beside the run's directory: the loop writes its merged config into the directory.
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{run}.yaml"), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
