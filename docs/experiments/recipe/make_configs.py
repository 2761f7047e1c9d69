#!/usr/bin/env python3
"""Writes the configs of the recipe comparison: the game's shipped config as it is ("base") and
with the KataGo-style network ("kata": global pooling, pooled heads, ownership, score, wdl and
reply heads), each for every seed, with the ladder off (runs are rated afterwards by the same
matches) and the same time limit on the same clock (wall or cpu, `train.clock`).

  make_configs.py GAME_CONFIG OUT_DIR MINUTES CLOCK SEED [SEED ...]"""
import os
import re
import sys

RECIPES = {
    "base": {},
    "kata": {
        "pool_every": 2,
        "pool_channels": 16,
        "policy_pool": 1,
        "value_pool": 1,
        "ownership": 1,
        "score": 1,
        "wdl": 1,
        "reply": 1,
    },
}


def set_key(text, key, value):
    new, n = re.subn(rf"(?m)^(  {key}:) .*$", rf"\g<1> {value}", text)
    if n != 1:
        sys.exit(f"{key}: found {n} times in the config, expected once")
    return new


def add_network_keys(text, keys):
    """Adds `keys` at the end of the `network` section (they are only comments there)."""
    lines = text.split("\n")
    start = lines.index("network:")
    end = next(i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace())
    while not lines[end - 1].strip():
        end -= 1
    lines[end:end] = [f"  {k}: {v}" for k, v in keys.items()]
    return "\n".join(lines)


def main():
    source, out, minutes, clock, seeds = sys.argv[1:5] + [sys.argv[5:]]
    base = open(source, encoding="utf-8").read()
    os.makedirs(out, exist_ok=True)
    for recipe, network in RECIPES.items():
        for seed in seeds:
            text = base
            common = {
                "eval_games": "0",
                "iterations": "100000",
                "time_limit_minutes": minutes,
                "clock": clock,
            }
            for key, value in common.items():
                text = set_key(text, key, value)
            # train.seed: the first network drawn and every random choice of the loop.
            text = re.sub(r"(?m)^(train:\n(?:  .*\n|\s*\n)*?  seed:) \d+", rf"\g<1> {seed}", text)
            text = add_network_keys(text, network)
            with open(os.path.join(out, f"{recipe}-s{seed}.yaml"), "w", encoding="utf-8") as f:
                f.write(text)


if __name__ == "__main__":
    main()
