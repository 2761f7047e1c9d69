#!/bin/bash
# Liuzhou's shipped network carried into KataGo's network and trained on with the recipe that
# learned most per CPU-hour in the recipe comparison ("kataint8", docs/experiments/liuzhou.md):
# GAMES self-play games of the shipped network (int8), a fresh network of distil.yaml fitted
# on them with half of every target the shipped network's outputs, then the loop of loop.yaml
# from it for 600 CPU minutes. Resumable: each step is skipped when its output is there, and
# the loop continues where it stopped. Rate the loop's best afterwards:
#   engine match --game liuzhou --black net:model=DIR/loop/best.onnx,time=0.1,batch=16 \
#     --white net:time=0.1,batch=16 --games 100 --parallel 2 --openings 4 --seed 1
#   (and --white alphabeta:movetime=100, and alphabeta:movetime=1000)
#   run.sh [DIR]   DIR defaults to runs/liuzhou-kata; GAMES (2000) and ENGINE, TRAINER
#                  (engine, trainer-bridge) from the environment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
dir=${1:-runs/liuzhou-kata}
engine=${ENGINE:-engine}
trainer=${TRAINER:-trainer-bridge}
games=${GAMES:-2000}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
teacher=$root/models/liuzhou/best
if [ ! -f "$dir/selfplay.done" ]; then
  "$engine" selfplay --game liuzhou --model "$teacher.onnx" --precision int8 --games "$games" \
    --seed 7 --out "$dir/selfplay"
  touch "$dir/selfplay.done"
fi
[ -f "$dir/fresh.safetensors" ] ||
  "$trainer" init --game liuzhou --config "$here/distil.yaml" --out "$dir/fresh"
[ -f "$dir/kata.safetensors" ] ||
  "$trainer" fit "$dir/selfplay" --model "$dir/fresh.safetensors" --out "$dir" --name kata \
    --config "$here/distil.yaml" --teacher "$teacher.safetensors" --log "$dir/distil.jsonl"
sed "s|@DIR@|$dir|g" "$here/loop.yaml" > "$dir/loop.yaml"
"$engine" train --config "$dir/loop.yaml"
