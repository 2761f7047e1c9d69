#!/bin/bash
# A Go network of any size, distilled from the shipped 9 x 9 network: self-play of the shipped
# network at 9 x 9 (its shards carry ownership and score targets), a fresh network of
# distil.yaml, and a fit whose targets are half the shards' and half the shipped network's
# outputs. Resumable: each step is skipped when its output is there (a self-play killed midway
# plays its games again, beside the shards it finished).
#   run.sh [DIR]   DIR defaults to runs/go-any; GAMES (400) and ENGINE, TRAINER (engine,
#                  trainer-bridge) from the environment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
dir=${1:-runs/go-any}
engine=${ENGINE:-engine}
trainer=${TRAINER:-trainer-bridge}
games=${GAMES:-400}
mkdir -p "$dir"
if [ ! -f "$dir/selfplay9.done" ]; then
  "$engine" selfplay --game go --games "$games" --seed 7 --out "$dir/selfplay9"
  touch "$dir/selfplay9.done"
fi
[ -f "$dir/fresh.safetensors" ] ||
  "$trainer" init --game go --config "$here/distil.yaml" --out "$dir/fresh"
[ -f "$dir/any.safetensors" ] ||
  "$trainer" fit "$dir/selfplay9" --model "$dir/fresh.safetensors" --out "$dir" --name any \
    --config "$here/distil.yaml" --teacher "$root/models/go/best.safetensors" \
    --log "$dir/distil.jsonl"
