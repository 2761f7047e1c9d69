#!/bin/bash
# The training recipe at equal compute: the game's shipped recipe ("base") against KataGo's
# bundle ("kata": the network with global pooling and auxiliary heads, and the procedure: soft
# policy, surprise weighting, short-term value targets, forced playouts; make_configs.py lists
# the keys), or another pair (RECIPES), each trained from zero (Go: from the config's bootstrap
# shards) for the same CPU time (train.clock cpu, so other work on the machine does not tilt
# the comparison; CLOCK=wall counts the wall instead), one run after another, for each seed;
# then every run's best at fixed minutes against the other recipe's final best of the same
# seed, and every final against an outside player (rate.py), every network in fp32 (a recipe
# whose fits write int8 files is rated in the same arithmetic as one whose fits do not).
# Resumable: a killed run continues where it stopped (engine train resumes), finished runs and
# matches are kept.
#   run.sh [DIR]   DIR defaults to runs/recipe; GAME (liuzhou or go), MINUTES (120: CPU minutes, an
#                  hour of 2 busy cores), CLOCK (cpu), SEEDS ("1 2"),
#                  RECIPES ("base kata": two of make_configs.py's recipes; a directory
#                  of another pair can link the runs it shares with this one),
#                  GAMES per match (40), OUTSIDE_GAMES per match against the outside
#                  player (GAMES; rate.py names the player), OPENINGS (random actions
#                  before each pair of games: 4), ENGINE (engine) and CONFIG (the game's config in
#                  configs/; a copy pins a run that lasts across sessions to the config its
#                  binary knows) from the environment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-runs/recipe}
export GAME=${GAME:-liuzhou}
game=$GAME
minutes=${MINUTES:-120}
clock=${CLOCK:-cpu}
seeds=${SEEDS:-1 2}
games=${GAMES:-40}
engine=${ENGINE:-engine}
export RECIPES=${RECIPES:-base kata}
# shellcheck disable=SC2086
python3 "$here/make_configs.py" "${CONFIG:-$here/../../../configs/$game.yaml}" "$dir" "$minutes" "$clock" $seeds
for seed in $seeds; do
  # shellcheck disable=SC2086
  for recipe in $RECIPES; do
    run=$recipe-s$seed
    [ -f "$dir/$run/done" ] && continue
    mkdir -p "$dir/$run"
    TIMEFORMAT="$run: %R s wall, %U s user, %S s system"
    { time "$engine" train --game "$game" --config "$dir/$run.yaml" --run-dir "$dir/$run" \
        >> "$dir/$run/train.log" 2>&1; } 2>> "$dir/$run/time.txt"
    touch "$dir/$run/done"
  done
done
mkdir -p "$dir/rate"
# shellcheck disable=SC2086
python3 "$here/rate.py" "$dir" "$minutes" $seeds | while read -r name black white; do
  log=$dir/rate/$name.log
  grep -q "^score" "$log" 2>/dev/null && continue
  n=$games
  case $name in *-alphabeta | *-gnugo) n=${OUTSIDE_GAMES:-$games} ;; esac
  "$engine" match --game "$game" --black "$black" --white "$white" --games "$n" \
    --parallel 2 --openings "${OPENINGS:-4}" --seed 1 --precision fp32 > "$log" 2>&1
done
# shellcheck disable=SC2086
python3 "$here/rate.py" "$dir" "$minutes" $seeds --table
