#!/usr/bin/env python3
"""Writes the configs of the recipe comparison: the game's shipped config as it is ("base") and
KataGo's bundle ("kata"): the network with global pooling, pooled heads, ownership, score, wdl,
reply and soft policy heads, and the procedure: policy-surprise weighting, short-term value
targets and, where self-play searches with PUCT, forced playouts. Each for every seed, with the ladder off (runs are rated afterwards by the same
matches) and the same time limit on the same clock (wall or cpu, `train.clock`). A third
recipe, "int8", is base with its self-play in int8 (the best model's int8 file, written by each
fit), for the comparison of that piece alone; "kataint8" is kata with int8 self-play as well.

  make_configs.py GAME_CONFIG OUT_DIR MINUTES CLOCK SEED [SEED ...]
  RECIPES (environment): the recipes to write, "base kata" by default."""
import os
import re
import sys

RECIPES = {
    "base": {},
    "int8": {},
    "kata": {
        "pool_every": 2,
        "pool_channels": 16,
        "policy_pool": 1,
        "value_pool": 1,
        "ownership": 1,
        "score": 1,
        "wdl": 1,
        "reply": 1,
        "soft_policy": 1,
    },
}
RECIPES["kataint8"] = RECIPES["kata"]

# Procedure keys of each recipe, set where the config has them uncommented (once each).
PROCEDURE = {
    "base": {},
    "int8": {
        "train.selfplay_precision": "auto",
        "fit.int8": "true",
    },
    "kata": {
        # KataGo's share of the weight spread by surprise.
        "fit.surprise_weight": "0.5",
        # A fifth of the value target from the following positions' search values.
        "selfplay.value_result_weight": "0.8",
        "selfplay.value_horizon": "0.9",
        # KataGo's k; Gumbel self-play ignores it.
        "selfplay.forced_playouts": "2",
    },
}
PROCEDURE["kataint8"] = {**PROCEDURE["kata"], **PROCEDURE["int8"]}


def key_lines(lines, section, name):
    """The end of top-level `section` (before its trailing blank lines) and the indices of its
    uncommented `name:` lines."""
    start = lines.index(f"{section}:")
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()),
               len(lines))
    while not lines[end - 1].strip():
        end -= 1
    return end, [i for i in range(start, end) if re.match(rf"  {name}: ", lines[i])]


def set_key(text, key, value):
    """Sets `section.key` (an uncommented line of that top-level section) to `value`."""
    section, name = key.split(".")
    lines = text.split("\n")
    _, found = key_lines(lines, section, name)
    if len(found) != 1:
        sys.exit(f"{key}: found {len(found)} times in the config, expected once")
    lines[found[0]] = f"  {name}: {value}"
    return "\n".join(lines)


def add_network_keys(text, keys):
    """Sets `keys` in the `network` section: where a key is set there already, in place, else at
    the section's end (a config that leaves the part off has it only as a comment)."""
    lines = text.split("\n")
    for k, v in keys.items():
        end, found = key_lines(lines, "network", k)
        if found:
            lines[found[0]] = f"  {k}: {v}"
        else:
            lines.insert(end, f"  {k}: {v}")
    return "\n".join(lines)


def main():
    source, out, minutes, clock, seeds = sys.argv[1:5] + [sys.argv[5:]]
    base = open(source, encoding="utf-8").read()
    os.makedirs(out, exist_ok=True)
    for recipe in os.environ.get("RECIPES", "base kata").split():
        network = RECIPES[recipe]
        for seed in seeds:
            text = base
            common = {
                "train.eval_games": "0",
                "train.iterations": "100000",
                "train.time_limit_minutes": minutes,
                "train.clock": clock,
            }
            for key, value in {**common, **PROCEDURE[recipe]}.items():
                text = set_key(text, key, value)
            # train.seed: the first network drawn and every random choice of the loop.
            text = re.sub(r"(?m)^(train:\n(?:  .*\n|\s*\n)*?  seed:) \d+", rf"\g<1> {seed}", text)
            text = add_network_keys(text, network)
            with open(os.path.join(out, f"{recipe}-s{seed}.yaml"), "w", encoding="utf-8") as f:
                f.write(text)


if __name__ == "__main__":
    main()
